"""The GPU campaign's evaluation: which rows each fit may read, and the rows it hands to training."""
import json
import unittest
from unittest import mock

from scripts.calibration import evaluate_gpu_ours as ego


def row(device, family, protocol="inference", batch=1):
    return {"device_id": device, "family": family, "protocol": protocol, "batch": batch, "sequence": 0,
            "past_sequence": 0, "precision": "fp16", "graph": f"/zoo/{family}.onnx", "inputs": {"x": ["batch", 3]},
            "median_ms": 2.0, "device_used_mib": 1000.0, "power_w": 100.0, "energy_j_per_sample": 0.2}


class StageGDevices(unittest.TestCase):
    def test_names_only_the_devices_the_shipped_fit_read(self):
        envs = {"h200-sxm-141gb": {}, "h100-sxm5-80gb": {}}
        prov = {"stage_g": {"source": "data/measured/gpu_*_torch.csv: h200-sxm-141gb (NVIDIA H200, ...)"}}
        self.assertEqual(ego.stage_g_devices({"provenance": json.dumps(prov)}, envs), {"h200-sxm-141gb"})
        prov = {"stage_g": {"source": "data/measured/gpu_*_torch.csv: a100-sxm4-80gb (NVIDIA A100, ...)"}}
        self.assertEqual(ego.stage_g_devices({"provenance": json.dumps(prov)}, {"a10": {}, "a100-sxm4-80gb": {}}),
                         {"a100-sxm4-80gb"})
        self.assertEqual(ego.stage_g_devices({"provenance": "{}"}, envs), set())


class CrossDevice(unittest.TestCase):
    def test_a_device_is_scored_with_constants_fitted_without_any_of_its_rows(self):
        rows = [row("a", "resnet"), row("a", "vgg"), row("b", "resnet"), row("b", "vit", "training")]
        seen = {}

        def fake_fit(fit_rows, base):
            devices = {r["device_id"] for r in fit_rows}
            seen[frozenset(devices)] = len(fit_rows)
            return {"dispatch_us": 10.0 * len(devices)}, {"launch_families": []}

        with mock.patch("scripts.calibration.calibrate_eager_gpu.fit", fake_fit), \
                mock.patch("scripts.calibration.calibrate_eager_gpu.with_constants", lambda base, fams, **k: k), \
                mock.patch.object(ego, "run_queries", lambda qs, constants: [{"q": q} for q in qs]):
            got = ego.cross_device(rows, {})
        self.assertEqual(seen, {frozenset({"b"}): 2, frozenset({"a"}): 2})
        self.assertEqual(sorted(got["a"][1]), [0, 1])
        self.assertEqual(sorted(got["b"][1]), [2, 3])

    def test_one_device_has_nothing_to_fit_elsewhere(self):
        with mock.patch("scripts.calibration.calibrate_eager_gpu.fit", side_effect=AssertionError("fitted")):
            self.assertEqual(ego.cross_device([row("a", "resnet")], {}), {})


class Constants(unittest.TestCase):
    def test_the_kernel_floor_goes_to_the_named_families_and_dispatch_to_eager(self):
        from scripts.calibration.calibrate_eager_gpu import busy_ms, with_constants
        base = {"families": {"hopper": {"launch_us": 0.0}, "ampere": {"launch_us": 0.0}},
                "runtimes": {"pytorch-eager": {"dispatch_us": 40.0, "context_mb": 1.0},
                             "pytorch-cuda-graphs": {"dispatch_us": 1.0, "context_mb": 1.0}}}
        d = with_constants(base, ["hopper"], launch_us=1.7, dispatch_us=20.0, context_mb=5.0)
        self.assertEqual((d["families"]["hopper"]["launch_us"], d["families"]["ampere"]["launch_us"]), (1.7, 0.0))
        self.assertEqual(d["runtimes"]["pytorch-eager"]["dispatch_us"], 20.0)
        self.assertEqual(d["runtimes"]["pytorch-cuda-graphs"]["dispatch_us"], 1.0)
        self.assertEqual(d["runtimes"]["pytorch-cuda-graphs"]["context_mb"], 5.0)
        self.assertEqual(base["families"]["hopper"]["launch_us"], 0.0)
        self.assertAlmostEqual(busy_ms({"busy_fraction": 0.25, "latency_ms": 8.0}), 2.0)

    def test_the_shipped_figure_of_each_fitted_constant(self):
        from scripts.calibration.calibrate_eager_gpu import shipped_constants
        doc = {"families": {"hopper": {"launch_us": 0.5}}, "runtimes": {"pytorch-eager": {"dispatch_us": 40.0}}}
        self.assertEqual(shipped_constants(doc, {"dispatch_us": 20.0, "launch_us": 4.0}, {"launch_families": ["hopper"]}),
                         {"dispatch_us": 40.0, "launch_us": 0.5})
        self.assertEqual(shipped_constants(doc, {"dispatch_us": 20.0}, {"launch_families": []}), {"dispatch_us": 40.0})

    def test_the_kernel_floor_goes_to_every_gpu_family_of_the_catalog(self):
        from scripts.calibration.calibrate_eager_gpu import gpu_families
        fams = gpu_families()
        self.assertIn("hopper", fams)
        self.assertIn("ampere", fams)
        self.assertNotIn("cpu", fams)
        self.assertNotIn("browser", fams)

class Runtimes(unittest.TestCase):
    def test_compiled_rows_are_counted_not_loaded_unless_asked_for(self):
        import csv
        import os
        import shutil
        import tempfile
        from scripts import paths
        from scripts.measure.gpu_campaign import FIELDS
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        shutil.copy(os.path.join(paths.MEASURED, "gpu_nvidia_h200_environment.json"),
                    os.path.join(tmp, "gpu_x_environment.json"))
        with open(os.path.join(tmp, "gpu_x_torch.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=FIELDS, restval="")
            w.writeheader()
            w.writerow(dict(model="nb201_00000", family="nasbench201", set="nasbench201", runtime="compile",
                            precision="fp16", protocol="inference", batch=1, sequence=0, past_sequence=0,
                            median_ms=0.5))
        rows, skipped, _ = ego.load(os.path.join(tmp, "gpu_*_torch.csv"))
        self.assertEqual(rows, [])
        self.assertEqual(dict(skipped["h200-sxm-141gb"]), {"runtime compile (not predicted)": 1})

    def test_compile_against_eager_pairs_the_same_configuration(self):
        base = dict(device_id="d", model="m", precision="fp16", batch=1, sequence=0, past_sequence=0,
                    protocol="inference")
        rows = [dict(base, runtime="eager", median_ms=2.0), dict(base, runtime="compile", median_ms=1.0),
                dict(base, runtime="compile-reduce-overhead", median_ms=0.5, batch=16)]  # no eager at 16
        text = "\n".join(ego.compile_lines(rows))
        self.assertIn("| d | m | fp16 | 1 | 2.000 | 1.000 (2.00x) |  |", text)
        self.assertIn("| d | m | fp16 | 16 | not yet measured |  | 0.500 |", text)
        self.assertEqual(ego.compile_lines(rows[:1]), [])
        graphs = ego.compile_lines(rows, {("d", "m", "fp16", 16, 0, 0): 0.75})
        self.assertIn("| d | m | fp16 | 16 | not yet measured |  | 0.500 | 0.750 |", "\n".join(graphs))
        self.assertIn("against reduce-overhead: 1 rows, MAPE 50%, median signed +50%", "\n".join(graphs))
        self.assertIn("never fitted on them", "\n".join(graphs))
        fitted = "\n".join(ego.compile_lines(rows, {("d", "m", "fp16", 16, 0, 0): 0.75}, fitted=True))
        self.assertIn("against reduce-overhead (fitted on them): 1 rows", fitted)
        self.assertIn("stage H fitted on these rows", fitted)


class FailureKinds(unittest.TestCase):
    def test_one_cause_is_one_kind_whatever_its_figures(self):
        a = ego.failure_kind("skipped: 13004888 parameters here, the manifest's graph has 6624904")
        self.assertEqual(a, "skipped: N parameters here, the manifest's graph has N")
        self.assertEqual(a, ego.failure_kind("skipped: 27161264 parameters here, the manifest's graph has 23834568"))
        self.assertEqual(ego.failure_kind("out of memory"), "out of memory")


class MeasuredAt(unittest.TestCase):
    def test_what_the_campaign_held_at_a_commit(self):
        name = "gpu_nvidia_h100_80gb_hbm3_torch.csv"
        got = ego.measured_at("HEAD", [name, "gpu_none_torch.csv"])
        self.assertGreater(len(got[name]), 100)
        self.assertEqual(got["gpu_none_torch.csv"], set())  # a device measured later: every row is new
        self.assertIsNone(ego.measured_at("f" * 40, [name]))  # not in this clone: no split, not "all new"

    def test_rows_measured_since_the_training_commit_are_the_unseen_ones(self):
        from scripts.measure.gpu_campaign import Config
        old = Config(model="m", family="f", set="s", batch=1)
        rows = [dict(zip([f.name for f in ego.fields(Config)], old.key()), csv="x.csv"),
                dict(zip([f.name for f in ego.fields(Config)], old.key()), csv="x.csv", batch="2")]
        with mock.patch.object(ego, "trained_at", lambda p: "abc1234"), \
                mock.patch.object(ego, "measured_at", lambda commit, names: {"x.csv": {old.key()}}):
            self.assertEqual(ego.unseen_by("auto", rows), ("abc1234", {1}))
        with mock.patch.object(ego, "trained_at", lambda p: None):
            self.assertEqual(ego.unseen_by("trees", rows), (None, None))


class TrainingRows(unittest.TestCase):
    def test_gpu_ours_hands_only_inference_rows_with_the_campaign_query(self):
        from scripts.training import rows as trows
        rows = [row("h100-sxm5-80gb", "resnet", batch=16), row("h100-sxm5-80gb", "resnet", "training"),
                row("h100-sxm5-80gb", "resnet", "inference-grad")]
        with mock.patch.object(ego, "load", lambda: (rows, {}, {})):
            df = trows.gpu_ours_rows()
        self.assertEqual(len(df), 1)
        got = df.iloc[0]
        self.assertEqual((got.source, got.device_id, got.precision, got.runtime, got.latency_ms),
                         ("gpu_ours", "h100-sxm5-80gb", "fp16", "pytorch-eager", 2.0))
        self.assertEqual(json.loads(got.dims), {"batch": 16})


if __name__ == "__main__":
    unittest.main()
