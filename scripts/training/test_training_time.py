"""A training step through `perfcard eval` (the queries evaluate_training_time.py sends), its refusal of a
training step's kernel sequence, and the per-family error it writes into the constants."""
import json
import os
import subprocess
import tempfile
import unittest

import pandas as pd

from scripts import paths
from scripts.roofline.perfcard_eval import cli
from scripts.training.evaluate_training_time import MIN_FAMILY_ROWS, training_accuracy


class EvalTrainingStep(unittest.TestCase):
    def run_eval(self, queries):
        with tempfile.TemporaryDirectory() as tmp:
            q = os.path.join(tmp, "q.jsonl")
            with open(q, "w") as f:
                for query in queries:
                    f.write(json.dumps(query) + "\n")
            r = subprocess.run([cli(), "eval", q], capture_output=True, text=True, check=True)
        return [json.loads(line) for line in r.stdout.splitlines()]

    def test_a_step_is_timed_phase_by_phase_and_its_kernel_sequence_is_refused(self):
        base = {"model": os.path.join(paths.ROOT, "public", "examples", "resnet50.onnx"), "dims": {"batch": 32},
                "device": "a100-sxm4-80gb", "precision": "fp16", "predictor": "roofline"}
        forward, step, seq = self.run_eval([base, {**base, "training": {"optimizer": "sgd"}},
                                            {**base, "training": {"optimizer": "sgd"}, "sequence": True}])
        self.assertNotIn("busy_ms_by_phase", forward)
        phases = step["busy_ms_by_phase"]
        self.assertEqual(sorted(phases), ["backward", "forward", "update"])
        self.assertTrue(all(v > 0 for v in phases.values()))
        self.assertGreater(phases["backward"], phases["forward"])
        self.assertGreater(step["latency_ms"], 2 * forward["latency_ms"])
        self.assertEqual(seq["error"], '"sequence" is the kernel sequence of an inference run; a training step\'s '
                                       '(its optimizer\'s passes have no node) is not one the transformer reads')


class TrainingAccuracy(unittest.TestCase):
    def test_families_with_enough_rows_get_their_own_error_the_rest_the_pooled_one(self):
        n = MIN_FAMILY_ROWS
        p = pd.DataFrame({"source": ["timm"] * n + ["lambda"],
                          "device_family": ["ampere"] * n + ["hopper"],
                          "step_ms": [1.1] * n + [0.5], "measured_ms": [1.0] * (n + 1)})
        acc = training_accuracy(p)
        self.assertEqual(sorted(acc), ["all", "ampere"])
        self.assertAlmostEqual(acc["ampere"]["mape"], 0.1)
        self.assertEqual(acc["ampere"]["rows"], n)
        self.assertAlmostEqual(acc["all"]["mape"], round((0.1 * n + 0.5) / (n + 1), 4))
        self.assertEqual(acc["all"]["rows"], n + 1)


if __name__ == "__main__":
    unittest.main()
