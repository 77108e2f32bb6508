"""The probe-stability report: /usr/bin/python3 -m unittest scripts.measure.test_probe_stability"""
import unittest

import pandas as pd

from scripts.measure import probe_stability as ps


class Report(unittest.TestCase):
    def test_a_probe_that_reads_low_while_onnxruntime_holds_is_an_error_it_adds(self):
        # Five turns; the fourth probe reads 20% low while onnxruntime runs as usual: that turn's prediction
        # would be 25% slow. The fifth, onnxruntime 10% slower and the probe 10% lower: the probe tracked it.
        # A sixth turn, taken while something else loaded the machine, is left out whatever it says.
        df = pd.DataFrame({"machine_id": ["m"] * 6, "gemm_gflops": [10, 10, 10, 8, 9, 1], "stream_gbs": [5] * 6,
                           "resnet18_t1_ms": [20, 20, 20, 20, 22, 20], "resnet50_all_ms": [40, 40, 40, 40, 44, 40],
                           "load_1m": [0.6] * 5 + [1.7]})
        out = ps.report(df)
        self.assertIn("| m | 5 | 1 | gemm_gflops | 10.00 | 0.840 | 1.000 |", out)
        line = next(x for x in out if x.startswith("| m | resnet18_t1_ms |"))
        cells = [c.strip() for c in line.split("|")[1:-1]]
        self.assertEqual(cells[2:4], ["5", "+0.0%"])
        self.assertEqual(cells[-1], "+25.0%")  # 1 / 0.8 - 1; the fifth turn adds 10/11 x 10/9 - 1 = 1%


if __name__ == "__main__":
    unittest.main()
