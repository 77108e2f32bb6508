"""Stage W's parametrisation keeps the file valid (efficiencies in (0, 1], the matrix speed-up in the
family's clock ratio), and its docs/accuracy.md section carries the provenance's figures."""
import json
import math
import unittest

from scripts import paths
from scripts.calibration import calibrate_browser as W


class BrowserFamilyTest(unittest.TestCase):
    def setUp(self):
        with open(paths.ROOFLINE_JSON) as f:
            self.doc = json.load(f)

    def test_a_speedup_over_the_probe_goes_to_the_clock_ratio(self):
        d = W.with_browser(self.doc, [math.log(4.0), 0.0, 2.0, math.log(3.0)])
        fam = d["families"]["browser"]
        self.assertAlmostEqual(fam["clock_ratio"] * fam["gemm_eff_fp32"], 4.0)
        self.assertEqual(fam["gemm_eff_fp32"], 1.0)
        self.assertEqual(fam["conv_eff_fp32"], fam["gemm_eff_fp32"])
        self.assertTrue(0 < fam["vector_eff"] < 1 and 0 < fam["mem_eff"] < 1)
        self.assertEqual(d["arch_family"]["browser"], "browser")
        rt = d["runtimes"]["onnxruntime-web"]
        self.assertAlmostEqual(rt["dispatch_us"], 3.0)
        self.assertEqual(rt["kind"], "cpu")
        self.assertEqual(rt["fuse_elementwise"], d["runtimes"]["onnxruntime"]["fuse_elementwise"])

    def test_a_slowdown_stays_an_efficiency(self):
        fam = W.with_browser(self.doc, [math.log(0.5), 0.0, 0.0, 0.0])["families"]["browser"]
        self.assertEqual(fam["clock_ratio"], 1.0)
        self.assertAlmostEqual(fam["gemm_eff_fp32"], 0.5)

    def test_the_section_reports_every_split_and_environment(self):
        m = {"rows": 4, "mape": 0.25, "median_ape": 0.2, "kendall_tau": 0.9,
             "by_env": {"chromium": {"rows": 2, "mape": 0.3, "median_ape": 0.3, "kendall_tau": 1.0},
                        "node": {"rows": 2, "mape": 0.2, "median_ape": 0.2, "kendall_tau": 1.0}}}
        w = {"machines": ["m1"], "held_out": m, "in_sample": m, "train_families": ["a"], "held_out_families": ["b"],
             "fitted": {"clock_ratio": 4.5, "vector_eff": 0.38, "mem_eff": 0.71, "onnxruntime_web_dispatch_us": 1.75}}
        text = W.section(w)
        self.assertTrue(text.startswith(W.BEGIN) and text.endswith(W.END))
        self.assertIn("| held-out families | chromium | 2 | 30.0% | 30.0% | 1.00 |", text)
        self.assertIn("| in-sample (fitted) | both | 4 | 25.0% | 20.0% | 0.90 |", text)
        self.assertIn("4.50x the probe's matrix rate", text)


if __name__ == "__main__":
    unittest.main()
