"""Where each device family's uncertainty comes from: whole models first (ours, then timm, DLE), kernels only
where no whole model was measured, never in-sample rows, never fewer than five rows."""
import unittest

import pandas as pd

from scripts.calibration import evaluate_roofline as E


def row(source, device, mape, rows, split="held-out families"):
    return {"source": source, "split": split, "device_id": device, "precision": "fp16", "rows": rows, "mape": mape}


class FamilyAccuracy(unittest.TestCase):
    def test_our_whole_models_come_before_kernels_and_pool_by_rows(self):
        table = pd.DataFrame([row("NeuSight GEMM kernels", "h100", 0.17, 700, "held-out shapes"),
                              row(E.GPU_OURS, "h100", 0.36, 300, "never fitted"),
                              row(E.GPU_OURS, "h200", 0.99, 100, "never fitted")])
        got = E.family_accuracy(table, {"hopper": ["h100", "h200"]})
        self.assertEqual(got["hopper"], {"mape": round((0.36 * 300 + 0.99 * 100) / 400, 4), "rows": 400,
                                         "source": E.GPU_OURS + ", never fitted"})

    def test_in_sample_and_too_few_rows_fall_through_to_the_next_source(self):
        table = pd.DataFrame([row(E.GPU_OURS, "a100", 0.5, 4, "never fitted"),
                              row("timm eager inference", "a100", 0.05, 90, "in-sample (fitted)"),
                              row("timm eager inference", "a100", 0.1, 40),
                              row("NeuSight GEMM kernels", "v100", 0.2, 3, "held-out shapes")])
        got = E.family_accuracy(table, {"ampere": ["a100"], "volta": ["v100"]})
        self.assertEqual(got, {"ampere": {"mape": 0.1, "rows": 40, "source": "timm eager inference, held-out families"}})


if __name__ == "__main__":
    unittest.main()


class HostBoundAccuracy(unittest.TestCase):
    def test_each_source_weighs_the_same_and_thin_sources_are_left_out(self):
        got = E.host_bound_accuracy({"gpu_ours": (400, 0.6), "help_gpu": (5000, 0.2), "dle": (4, 0.9)})
        self.assertEqual((got["mape"], got["rows"]), (0.4, 5400))  # not 5000 rows' 0.2 drowning 400 rows' 0.6
        self.assertIn("HELP", got["source"])
        self.assertNotIn("DLE", got["source"])
        self.assertIsNone(E.host_bound_accuracy({"dle": (4, 0.9)}))
        self.assertIsNone(E.host_bound_accuracy({}))
