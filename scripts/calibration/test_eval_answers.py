"""`perfcard eval` answers power, energy, the host-bound flag, the uncertainty and the device's memory figure as
`perfcard predict` prints them: the evaluations (evaluate_gpu_ours, calibrate_eager_gpu, evaluate_roofline)
read these instead of re-deriving them in Python.

    /usr/bin/python3 -m unittest scripts.calibration.test_eval_answers
"""
import json
import os
import subprocess
import unittest

from scripts import paths
from scripts.roofline.perfcard_eval import cli, run_queries

MODEL = os.path.join(paths.ROOT, "public", "examples", "resnet50.onnx")


class EvalAnswers(unittest.TestCase):
    def test_power_energy_and_memory_total_equal_predict(self):
        for mode in ("inference", "training"):
            with self.subTest(mode=mode):
                args = [cli(), "predict", MODEL, "--device", "h200-sxm-141gb", "--batch", "4", "--precision", "fp16",
                        "--predictor", "roofline", "--mode", mode, "--json"]
                row = json.loads(subprocess.run(args, capture_output=True, text=True, check=True).stdout)["predictions"][0]
                q = {"model": MODEL, "dims": {"batch": 4}, "device": "h200-sxm-141gb", "precision": "fp16",
                     "runtime": "pytorch-eager", "predictor": "roofline", "memory": {"mode": mode, "optimizer": "adam"}}
                if mode == "training":
                    q["training"] = {"optimizer": "adam"}
                (got,) = run_queries([q])
                self.assertAlmostEqual(got["latency_ms"], row["latency_ms"], places=9)
                self.assertAlmostEqual(got["power_w"], row["power_w"], places=9)
                self.assertAlmostEqual(got["energy_j_per_sample"], row["energy_j_per_sample"], places=12)
                self.assertEqual(got["host_bound"], row["host_bound"])
                self.assertAlmostEqual(got["uncertainty"], row["uncertainty"], places=12)
                m = got["memory_bytes"]
                # The device's figure: every part once; saved_activations is a share of activations, not beside them.
                parts = ("weights", "activations", "workspace", "context", "gradients", "optimizer", "optimizer_update",
                         "allocator")
                self.assertAlmostEqual(m["total"], sum(m[k] for k in parts), delta=1.0)
                self.assertGreater(m["saved_activations"] if mode == "training" else 1, 0)
                self.assertAlmostEqual(m["total"] / 2 ** 20, row["peak_memory_mb"], delta=0.1)


if __name__ == "__main__":
    unittest.main()
