"""Which rows the eager-floor check takes, and how its table reads (no core, no shared data)."""
import json
import unittest

import pandas as pd

from scripts.training import eager_floor


def frame(rows):
    return pd.DataFrame([{"source": s, "runtime": rt, "dims": json.dumps({"batch": b}), "device_id": d, "model": m,
                          "precision": "fp16", "latency_ms": 1.0, "roofline_ms": 1.0, "split": "train"}
                         for s, rt, b, d, m in rows])


class RowsOf(unittest.TestCase):
    def test_batches_per_check_and_the_smallest_per_model_and_device(self):
        df = frame([("dle", "pytorch-eager", 1, "t4", "r50"), ("dle", "pytorch-eager", 8, "t4", "r50"),
                    ("dle", "pytorch-eager", 64, "t4", "r50"), ("help_gpu", "pytorch-eager", 1, "gtx1080ti", "c1"),
                    ("help_gpu", "pytorch-eager", 32, "gtx1080ti", "c1"), ("timm", "pytorch-eager", 256, "rtx3090", "a"),
                    ("timm", "pytorch-eager", 96, "rtx3090", "a"), ("timm", "pytorch-eager", 512, "rtx4090", "a"),
                    ("cpu_ours", "onnxruntime", 1, "cpu", "a")])
        got = eager_floor.rows_of(df)
        by = {i: sorted(zip(g.device_id, g.batch)) for i, g in got.groupby("check")}
        self.assertEqual(by[0], [("t4", 1)])
        self.assertEqual(by[1], [("t4", 8)])
        self.assertEqual(by[2], [("gtx1080ti", 1)])
        self.assertEqual(by[3], [("rtx3090", 96), ("rtx4090", 512)])
        self.assertNotIn("cpu_ours", set(got.source))


class Lines(unittest.TestCase):
    def test_a_check_without_held_out_rows_says_so(self):
        c = {"what": "x", "rows": 4, "devices": ["t4"], "host_bound_share": 0.75, "roofline_mape": 0.381,
             "roofline_median_ratio": 0.62, "roofline_tau": None, "auto_heldout_rows": 0, "auto_heldout_mape": None}
        text = "\n".join(eager_floor.lines({"checks": [c, dict(c, what="y", rows=0)]}))
        self.assertIn("| x | 4 | t4 | 75% | 38.1% | 0.62 | n/a | none held out (trained on) |", text)
        self.assertIn("| y | 0 | | | | | | |", text)


if __name__ == "__main__":
    unittest.main()
