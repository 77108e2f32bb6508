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

    def test_a_constant_at_an_end_of_its_range_is_said_to_be_one(self):
        inside = {"clock_ratio": 4.5, "gemm_eff_fp32": 1.0, "vector_eff": 0.38, "mem_eff": 0.71,
                  "onnxruntime_web_dispatch_us": 1.75}
        self.assertEqual(W.at_bounds(inside), [])
        # What the provenance keeps of a fit that ran into the ends: 4 decimals.
        ends = dict(inside, vector_eff=round(1 / (1 + math.exp(-7.0)), 4), onnxruntime_web_dispatch_us=0.01)
        self.assertEqual(W.at_bounds(ends), ["the pointwise efficiency", "the per-kernel cost"])
        m = {"rows": 4, "mape": 0.25, "median_ape": 0.2, "kendall_tau": 0.9, "by_env": {}}
        w = {"machines": ["m1"], "held_out": m, "in_sample": m, "train_families": ["a"], "held_out_families": ["b"]}
        self.assertIn("At an end of its search range: the pointwise efficiency, the per-kernel cost.",
                      W.section(dict(w, fitted=ends)))
        self.assertNotIn("search range", W.section(dict(w, fitted=inside)))

    def test_machines_left_out_are_reported_and_pooled_by_rows(self):
        def figures(rows, mape):
            return {"rows": rows, "mape": mape, "median_ape": mape, "kendall_tau": 0.8,
                    "by_env": {"chromium": {"rows": rows, "mape": mape, "median_ape": mape, "kendall_tau": 0.8}}}
        unseen = {"m1": {"all": figures(30, 0.4), "held_out_families": figures(10, 0.5), "fitted_on": ["m2"],
                         "fit_rows": 40, "counts": True},
                  "m2": {"all": figures(10, 0.2), "held_out_families": None, "fitted_on": ["m1"], "fit_rows": 50,
                         "counts": True},
                  "m3": {"all": figures(99, 0.9), "held_out_families": figures(2, 0.9), "fitted_on": ["m1"],
                         "fit_rows": 12, "counts": False}}
        self.assertEqual(W.pooled(unseen, "all"), {"mape": (30 * 0.4 + 10 * 0.2) / 40, "rows": 40})
        self.assertEqual(W.pooled(unseen), {"mape": 0.5, "rows": 10})
        self.assertIsNone(W.pooled({}))
        m = figures(4, 0.25)
        w = {"machines": ["m1", "m2"], "held_out": m, "in_sample": m, "train_families": ["a"], "held_out_families": ["b"],
             "fitted": {"clock_ratio": 4.5, "vector_eff": 0.38, "mem_eff": 0.71, "onnxruntime_web_dispatch_us": 1.75},
             "unseen_machines": unseen}
        text = W.section(w)
        self.assertIn("| m1 | m2 (40 rows) | 30 | chromium | 40.0% | 40.0% | 0.80 | 10, 50.0% |", text)
        self.assertIn("| m2 | m1 (50 rows) | 10 | chromium | 20.0% | 20.0% | 0.80 | none |", text)
        self.assertIn("| m3 (not counted) | m1 (12 rows) | 99 |", text)
        self.assertIn("Pooled over the counted machines: held-out families 10 rows, MAPE 50.0% (the row's uncertainty); "
                      "every family 40 rows, MAPE 35.0%.", text)
        for u in unseen.values():
            u["counts"] = False
        self.assertIsNone(W.pooled(unseen))
        self.assertIn("None counts yet", W.section(dict(w, unseen_machines=unseen)))
        self.assertNotIn("One machine", text)


if __name__ == "__main__":
    unittest.main()
