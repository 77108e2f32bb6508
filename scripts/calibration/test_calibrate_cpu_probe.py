"""Tests of stage P (calibrate_cpu_probe.py) and of the probed entries it fits on:
    /usr/bin/python3 -m unittest scripts.calibration.test_calibrate_cpu_probe   (needs the native build)"""
import json
import math
import os
import unittest

import pandas as pd

from scripts import paths
from scripts.calibration import calibrate_cpu_probe as stage_p
from scripts.calibration.calibrate_browser import leave_each_machine_out, set_family_accuracy
from scripts.calibration import evaluate_cpu_machines
from scripts.measure import machines
from scripts.roofline.perfcard_eval import run_queries


def probed(mid, gemm=25.0, stream=20.0, cpus="4", threads_per_core="1"):
    return {"machine_id": mid, "cpus": cpus, "threads_per_core": threads_per_core, "mem_total_kib": "16000000",
            "native_probe": {"gemm_gflops": gemm, "stream_gbs": stream, "runs": [{}, {}, {}]}}


@unittest.skipUnless(os.path.exists(paths.CLI), "needs the native build")
class ProbedEntries(unittest.TestCase):
    def test_the_core_writes_each_probed_machines_entry(self):
        got = machines.probed_entries({"m1": probed("m1"), "m2": {"machine_id": "m2", "cpus": "2"},
                                       "m3": probed("m3", cpus="8", threads_per_core="2")})
        self.assertEqual(sorted(got), ["m1", "m3"])  # m2 has no native probe: no entry
        e = got["m1"]
        self.assertEqual((e["id"], e["arch"], e["kind"]), ("probed-m1", "cpu-probed", "cpu"))
        self.assertEqual(e["cores"]["value"], 4)
        self.assertAlmostEqual(e["peak_fp32_gflops"]["value"], 100.0)
        self.assertAlmostEqual(e["memory_bandwidth_gbs"]["value"], 80.0)
        self.assertAlmostEqual(e["memory_gb"]["value"], 16000000 * 1024 / 1e9)
        self.assertIn("the median of 3 probes", e["peak_fp32_gflops"]["source"])
        # SMT siblings count once: 8 CPUs of 2 threads each are 4 cores.
        self.assertEqual(got["m3"]["cores"]["value"], 4)


@unittest.skipUnless(os.path.exists(paths.CLI), "needs the native build")
class Queries(unittest.TestCase):
    def test_a_query_may_name_a_probed_machine_without_a_catalog(self):
        mid = sorted(machines.probed_entries())[0]
        model = os.path.join(paths.ROOT, "tests", "data", "models", "resnet18.onnx")
        got = run_queries([{"model": model, "dims": {"batch": 1}, "device": machines.PROBED_PREFIX + mid,
                            "precision": "fp32", "runtime": "onnxruntime", "threads": 1}])
        self.assertGreater(got[0]["latency_ms"], 0)
        self.assertEqual(got[0]["family"], "cpu-probed")


class Family(unittest.TestCase):
    def setUp(self):
        with open(paths.ROOFLINE_JSON) as f:
            self.doc = json.load(f)

    def test_the_family_is_stage_es_with_its_two_ratios(self):
        before = json.dumps(self.doc, sort_keys=True)
        d = stage_p.with_family(self.doc, [math.log(8.0), math.log(1.5)])
        self.assertEqual(json.dumps(self.doc, sort_keys=True), before)  # the input is not changed
        fam, cpu = d["families"]["cpu-probed"], d["families"]["cpu"]
        self.assertAlmostEqual(fam["clock_ratio"], 8.0)
        self.assertAlmostEqual(fam["bandwidth_ratio"], 1.5)
        for k in ("gemm_eff_fp32", "conv_eff_fp32", "vector_eff", "mem_eff", "k_half", "launch_us"):
            self.assertEqual(fam[k], cpu[k], k)
        self.assertEqual(d["arch_family"]["cpu-probed"], "cpu-probed")

    def test_the_shipped_family_and_its_record_agree(self):
        p = json.loads(self.doc["provenance"])["stage_p"]
        fam = self.doc["families"]["cpu-probed"]
        for k in stage_p.FITTED:
            self.assertAlmostEqual(fam[k], p["fitted"][k], places=3)
        # The rest is stage E's as it is now: a stage E refit without stage P after it would leave it stale.
        cpu = self.doc["families"]["cpu"]
        self.assertEqual({k: v for k, v in fam.items() if k not in stage_p.FITTED},
                         {k: v for k, v in cpu.items() if k not in stage_p.FITTED})
        self.assertEqual(self.doc["format_version"], stage_p.FORMAT)
        acc = self.doc["accuracy"]["cpu-probed"]
        self.assertIn("stage P", acc["source"])
        # Every machine of the fit was also left out of it, and the uncertainty is the pooled figure of those.
        self.assertEqual(sorted(p["unseen_machines"]), p["machines"])
        self.assertAlmostEqual(acc["mape"], stage_p.pooled(p["unseen_machines"])["mape"])

    def test_evaluation_takes_the_fit_without_the_machine(self):
        p = json.loads(self.doc["provenance"])["stage_p"]
        mid = p["machines"][0]
        c = evaluate_cpu_machines.left_out_constants(mid)
        for k in stage_p.FITTED:
            self.assertAlmostEqual(c["families"]["cpu-probed"][k], p["unseen_machines"][mid]["fitted"][k], places=6)
        self.assertIsNone(evaluate_cpu_machines.left_out_constants("a machine never probed"))

    def test_section_states_each_left_out_machine_and_the_pooled_figure(self):
        m = {"rows": 10, "mape": 0.3, "median_ape": 0.25, "median_signed": 0.1, "kendall_tau": 0.9}
        unseen = {mid: {"held_out_families": m, "all": m, "fitted_on": [other], "counts": True,
                        "fitted": {"clock_ratio": 8.0, "bandwidth_ratio": 1.2}}
                  for mid, other in (("a", "b"), ("b", "a"))}
        text = stage_p.section({"fitted": {"clock_ratio": 8.0, "bandwidth_ratio": 1.2}, "train_rows": 20,
                                "train_families": ["x", "y"], "machines": ["a", "b"], "in_sample": m,
                                "held_out": m, "unseen_machines": unseen})
        self.assertTrue(text.startswith(stage_p.BEGIN) and text.endswith(stage_p.END))
        self.assertIn("| a left out: its held-out families | b (ratios 8.00, 1.20) | 10 | 30.0% | 25.0% | +10.0% | 0.90 |", text)
        self.assertIn("30.0% MAPE on 20 rows", text)


class LeaveEachMachineOut(unittest.TestCase):
    def test_each_fit_sees_only_the_other_machines_training_rows(self):
        # a: 40 training rows of 8 families, 6 held out; b: 10 training rows of 2 families, 6 held out.
        rows = pd.DataFrame(
            [{"machine_id": "a", "family": f"f{i % 8}", "split": "train"} for i in range(40)]
            + [{"machine_id": "a", "family": "h", "split": "test"}] * 6
            + [{"machine_id": "b", "family": f"f{i % 2}", "split": "train"} for i in range(10)]
            + [{"machine_id": "b", "family": "h", "split": "test"}] * 6)
        seen = {}

        def fit(others):
            seen[len(seen)] = sorted(set(zip(others.machine_id, others.split)))
            return {"machines": sorted(set(others.machine_id))}

        out = leave_each_machine_out(rows, fit, lambda df, c: {"rows": len(df), "fit_on": c["machines"]},
                                     lambda c: {"fitted": c["machines"]})
        self.assertEqual(seen, {0: [("b", "train")], 1: [("a", "train")]})
        self.assertEqual(out["a"]["all"], {"rows": 46, "fit_on": ["b"]})
        self.assertEqual(out["a"]["held_out_families"]["rows"], 6)
        self.assertEqual(out["a"]["fitted"], ["b"])
        # a's fit (b's 10 rows of 2 families) is too small to speak for a new machine; b's (a's 40 of 8) is not.
        self.assertFalse(out["a"]["counts"])
        self.assertTrue(out["b"]["counts"])
        self.assertEqual(leave_each_machine_out(rows[rows.machine_id == "a"], fit, lambda df, c: None), {})


class FamilyAccuracy(unittest.TestCase):
    def test_left_out_machines_else_one_machines_held_out_families_else_none(self):
        m = {"rows": 10, "mape": 0.3}
        unseen = {"a": {"held_out_families": m, "counts": True}, "b": {"held_out_families": m, "counts": True}}
        doc = {"accuracy": {"x": {"mape": 0.9, "rows": 1, "source": "an earlier fit"}}}
        set_family_accuracy(doc, "x", unseen, {"rows": 5, "mape": 0.1}, "rows", "stage Q")
        self.assertEqual((doc["accuracy"]["x"]["mape"], doc["accuracy"]["x"]["rows"]), (0.3, 20))
        self.assertIn("of 2 machines, each predicted with stage Q fitted on the other", doc["accuracy"]["x"]["source"])
        set_family_accuracy(doc, "x", {}, {"rows": 5, "mape": 0.1}, "rows", "stage Q")
        self.assertEqual(doc["accuracy"]["x"], {"mape": 0.1, "rows": 5, "source": "held-out families of our rows, one machine (stage Q)"})
        set_family_accuracy(doc, "x", {}, None, "rows", "stage Q")
        self.assertNotIn("x", doc["accuracy"])


if __name__ == "__main__":
    unittest.main()
