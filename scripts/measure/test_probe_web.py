"""probe_web's record keeps every run per machine and environment, and its summary is their median (what
calibrate_browser.py predicts each row with)."""
import json
import os
import tempfile
import unittest
from unittest import mock

from scripts.measure import probe_web


class ProbeRecordTest(unittest.TestCase):
    def test_runs_accumulate_and_the_summary_is_their_median(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "machine_probe.json")
            probe_web.record("m1", "node", [{"gemm_gflops": 4.0, "stream_gbs": 9.0}, {"gemm_gflops": 6.0, "stream_gbs": 7.0}], path)
            s = probe_web.record("m1", "node", [{"gemm_gflops": 5.5, "stream_gbs": 8.0, "runtime": "node v20"}], path)
            self.assertEqual(s["node"], {"gemm_gflops": 5.5, "stream_gbs": 8.0, "runs": 3})
            s = probe_web.record("m1", "chromium", [{"gemm_gflops": 3.0, "stream_gbs": 9.5}], path)
            self.assertEqual(set(s), {"node", "chromium"}, "environments are kept apart")
            probe_web.record("m2", "node", [{"gemm_gflops": 20.0, "stream_gbs": 30.0}], path)
            doc = probe_web.load(path)
            self.assertEqual(probe_web.summary(doc, "m1")["chromium"]["gemm_gflops"], 3.0, "machines are kept apart")
            self.assertEqual(probe_web.summary(doc, "m3"), {})
            with open(path) as f:
                self.assertEqual(len(json.load(f)["machines"]["m1"]["node"]["runs"]), 3)

    def test_probe_and_record_takes_turns_and_records_every_run(self):
        calls = []

        def fake(env):
            calls.append(env)
            return {"gemm_gflops": float(len(calls)), "stream_gbs": 10.0}

        with tempfile.TemporaryDirectory() as tmp, mock.patch.object(probe_web, "run_probe", fake):
            s = probe_web.probe_and_record("m1", ["node", "chromium"], 2, os.path.join(tmp, "p.json"))
        self.assertEqual(calls, ["node", "chromium", "node", "chromium"])
        self.assertEqual(s["node"], {"gemm_gflops": 2.0, "stream_gbs": 10.0, "runs": 2})  # median of 1 and 3
        self.assertEqual(s["chromium"]["runs"], 2)

    def test_each_machine_and_environment_is_a_device_the_eval_finds(self):
        doc = {"machines": {"m1": {"node": {"runs": [{"gemm_gflops": 4.0, "stream_gbs": 9.0}]},
                                   "chromium": {"runs": [{"gemm_gflops": 3.0, "stream_gbs": 8.0}]}}}}
        entries = probe_web.device_entries(doc)
        self.assertEqual(set(entries), {("m1", "node"), ("m1", "chromium")})
        e = entries[("m1", "chromium")]
        self.assertEqual((e["id"], e["arch"], e["kind"], e["cores"]["value"]), ("probe-m1-chromium", "browser", "cpu", 1))
        self.assertEqual((e["peak_fp32_gflops"]["value"], e["memory_bandwidth_gbs"]["value"]), (3.0, 8.0))
        self.assertAlmostEqual(e["memory_gb"]["value"], 2**32 / 1e9)  # wasm32, whatever the machine has
        self.assertIn("the median of 1 probe:", e["peak_fp32_gflops"]["source"])
        # A query naming a probed machine is predicted on its entry without the caller passing a catalog.
        from scripts.roofline.perfcard_eval import run_queries
        model = os.path.join(os.path.dirname(__file__), "..", "..", "public", "examples", "resnet50.onnx")
        q = {"model": model, "dims": {"batch": 1}, "precision": "fp32", "runtime": "onnxruntime-web", "threads": 1,
             "predictor": "roofline"}
        with mock.patch.object(probe_web, "load", lambda path=probe_web.PATH: doc):
            slow, fast = run_queries([dict(q, device="probe-m1-chromium"), dict(q, device="probe-m1-node")])
        self.assertEqual(slow["family"], "browser")
        self.assertGreater(slow["latency_ms"], fast["latency_ms"], "the slower probe predicts the slower row")

    def test_a_missing_file_is_an_empty_record(self):
        self.assertEqual(probe_web.load("/nonexistent/machine_probe.json"), {"machines": {}})


if __name__ == "__main__":
    unittest.main()
