"""Loader checks on the real public files.

    cd <repo root> && /usr/bin/python3 -m unittest scripts.data.test_sources -v

Skips (with the reason) when ../shared/data/public is absent.
"""
from __future__ import annotations

import os
import unittest

from scripts.data import devices, sources
from scripts.data.summary import gpu_coverage

PRECISIONS = {"fp32", "tf32", "fp16", "bf16", "amp", "amp_bf16", "int8", "fp8", "fp4", "mxfp4", "int4"}
LATENCY_KINDS = {"per_batch_step", "per_request", "per_query", "per_output_token", "per_prompt", "per_kernel_call",
                 "per_op_call", "per_inference"}
# sources whose every kept row must carry a latency
LATENCY_SOURCES = {"timm_benchmarks_long", "neusight_gemm_ops_fp32", "vidur_mlp_op_times", "mlenergy_v1_legacy_llm",
                   "mlenergy_v2_llm_diffusion", "mlenergy_v3_llm", "mlenergy_v3_diffusion", "mlperf_inference_results",
                   "help_latency_long", "ncnn_benchncnn", "llamacpp_gpu_bench_xiongjiedai", "ultralytics_yolo11_t4"}
ENERGY_SOURCES = {"mlenergy_v1_legacy_llm", "mlenergy_v2_llm_diffusion", "mlenergy_v3_llm", "mlenergy_v3_diffusion"}
_CACHE: dict = {}


def _require_data():
    if not sources.data_available():
        raise unittest.SkipTest("public data absent: " + sources.missing_message().replace("\n", " "))


def get(name):
    if name not in _CACHE:
        _CACHE[name] = sources.load(name)
    return _CACHE[name]


class TestDevices(unittest.TestCase):
    def test_examples(self):
        for raw, want in devices.EXAMPLES.items():
            self.assertEqual(devices.map_device(raw), want, raw)

    def test_unknown_is_none_with_reason(self):
        for raw in ("Foo Accelerator 9000", "", None, "NVIDIA A100", "H100", "TITAN X"):
            r = devices.resolve(raw)
            self.assertIsNone(r.device_id, raw)
            self.assertTrue(r.reason, raw)

    def test_source_context_is_scoped(self):
        self.assertIsNone(devices.map_device("H100"))
        self.assertEqual(devices.map_device("H100", source="trtllm_perf_overview"), "h100-sxm5-80gb")

    def test_mig(self):
        r = devices.resolve("NVIDIA A100-SXM-80GB (1x1g.10gb MIG)")
        self.assertEqual((r.device_id, r.mig), ("a100-sxm4-80gb", "1x1g.10gb"))

    def test_catalog_ids(self):
        for cid in ("a100-sxm4-40gb", "a100-sxm4-80gb", "a100-pcie-80gb", "h100-sxm5-80gb", "h100-pcie-80gb",
                    "h200-sxm-141gb", "b200-sxm-180gb", "v100-sxm2-32gb", "l4", "t4", "a10", "l40s", "rtx3090",
                    "rtx4090"):
            self.assertTrue(devices.in_catalog(cid), cid)
        for nid in ("a40", "a30", "v100-sxm2-16gb", "v100-pcie-32gb"):
            self.assertFalse(devices.in_catalog(nid), nid)


class TestMissingData(unittest.TestCase):
    def test_message(self):
        old = os.environ.get(sources.ENV_VAR)
        os.environ[sources.ENV_VAR] = "/nonexistent/perfcard-public"
        try:
            with self.assertRaises(sources.PublicDataMissing) as cm:
                sources.load("trtllm_perf_overview")
            self.assertIn("../shared/data/public", str(cm.exception))
        finally:
            if old is None:
                del os.environ[sources.ENV_VAR]
            else:
                os.environ[sources.ENV_VAR] = old


class TestLoaders(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        _require_data()

    def test_all_sources(self):
        for name in sources.SOURCES:
            with self.subTest(source=name):
                df = get(name)
                self.assertGreater(len(df), 0)
                self.assertEqual(list(df.columns[:len(sources.COMMON_COLUMNS)]), sources.COMMON_COLUMNS)
                self.assertTrue((df.source == name).all())
                self.assertIn("report", df.attrs)
                self.assertTrue(set(df["mode"].dropna()) <= {"inference", "training"})
                self.assertTrue(set(df.precision.dropna()) <= PRECISIONS, set(df.precision.dropna()) - PRECISIONS)
                self.assertTrue(set(df.latency_kind.dropna()) <= LATENCY_KINDS)
                # every row measures something
                meas = df.latency_ms.notna() | df.throughput_per_s.notna() | df.energy_j.notna()
                self.assertTrue(meas.all(), f"{(~meas).sum()} rows without a measurement")
                self.assertTrue((df.latency_ms.dropna() > 0).all())
                self.assertTrue((df.throughput_per_s.dropna() > 0).all())
                self.assertTrue(df.throughput_unit[df.throughput_per_s.notna()].notna().all())
                self.assertTrue(df.energy_unit[df.energy_j.notna()].notna().all())
                self.assertTrue(df.latency_kind[df.latency_ms.notna()].notna().all())
                # device mapping is never guessed: mapped <=> status mapped; unmapped rows carry a reason
                mapped = df.device_id.notna()
                self.assertTrue((df.device_status[mapped] == "mapped").all())
                self.assertTrue((df.device_status[~mapped] != "mapped").all())
                self.assertTrue((df.device_note[~mapped].fillna("").str.len() > 0).all())
                cat = df.device_id[df.in_catalog].unique()
                self.assertTrue(all(devices.in_catalog(c) for c in cat))
                if name in LATENCY_SOURCES:
                    self.assertEqual(int(df.latency_ms.isna().sum()), 0, "NaN latency in kept rows")
                if name in ENERGY_SOURCES:
                    self.assertEqual(int(df.energy_j.isna().sum()), 0, "NaN energy in kept rows")

    def test_gpu_device_coverage(self):
        for name in sources.SOURCES:
            with self.subTest(source=name):
                df = get(name)
                m, n = gpu_coverage(df)
                if n == 0:
                    continue
                if name in sources.GPU_COVERAGE_EXCEPTIONS or name in ("mlperf_inference_results", "ncnn_benchncnn"):
                    # variant not stated by the source: every unmapped GPU row keeps its family or a reason
                    g = df.device_kind.eq("gpu") & df.device_id.isna()
                    self.assertTrue((df.device_status[g].isin(["family_only", "ambiguous", "unknown"])).all())
                    continue
                self.assertGreater(m / n, 0.95, f"{name}: GPU rows mapped {m}/{n}")

    def test_timm(self):
        df = get("timm_benchmarks_long")
        self.assertEqual(len(df), 30438)
        self.assertEqual(set(df.runtime), {"pytorch-eager", "pytorch-compile"})
        self.assertTrue((df.runtime[df.timm_source_file.str.contains("dynamo")] == "pytorch-compile").all())
        self.assertEqual(set(df.device_id), {"rtx3090", "rtx4090", "rtx5090", "rtx-pro6000-bw-maxq",
                                             "cpu-intel-core-i9-10940x", "cpu-intel-core-i7-12700h"})
        r = df[(df.model == "resnet50") & (df.device_id == "rtx4090") & (df.batch == 256)]
        self.assertFalse(r.empty)
        ratio = (df.batch / df.throughput_per_s * 1000.0 / df.latency_ms)
        self.assertLess(float((ratio - 1).abs().max()), 0.1)

    def test_dle(self):
        df = get("nvidia_dle_readme_perf_tables")
        h = df.dle_throughput_header.fillna("")
        tf32 = h.str.contains("TF32") & ~h.str.contains("mixed|AMP|FP16", case=False)
        self.assertTrue((df.precision[tf32] == "tf32").all())
        ort = df.dle_subheading.str.contains("ONNX Runtime")
        self.assertTrue(df.runtime[ort].str.startswith("onnxruntime").all())
        trt = df.dle_subheading.str.contains("NVIDIA TensorRT with")
        self.assertTrue((df.runtime[trt] == "tensorrt").all())
        self.assertTrue(df.batch.notna().all())
        self.assertGreaterEqual(len(df), 3000)

    def test_help_filter(self):
        h = sources.load_help_latency_long(devices_filter=["2080ti"], search_spaces=["nasbench201"])
        self.assertEqual(len(h), 3 * 15625)
        self.assertEqual(set(h.device_id), {"rtx2080ti"})
        self.assertEqual(set(h.batch), {1.0, 32.0, 256.0})
        full = get("help_latency_long")
        self.assertEqual(len(full), 616875)
        self.assertTrue(full.batch[full.device_raw.astype(str).str.startswith("gold")].isna().all())

    def test_mlperf(self):
        df = get("mlperf_inference_results")
        self.assertTrue(df.power_kind[df.power_w.notna()].eq("system_wall_avg_approx").all())
        mig = df[df.mig.notna()]
        self.assertTrue(mig.device_id.notna().all())

    def test_lambda_power_not_measured(self):
        df = get("lambda_pytorch_train_throughput")
        self.assertTrue(df.power_w.isna().all())
        self.assertIn("lambda_watt_spec", df.columns)


class TestTimmTorchvisionMap(unittest.TestCase):
    def test_map(self):
        from scripts.data import timm_to_torchvision as tt
        m = tt.load_map()
        for t, v in [("resnet50", "resnet50"), ("vit_base_patch16_224", "vit_b_16"), ("swin_tiny_patch4_window7_224", "swin_t"),
                     ("mobilenetv2_100", "mobilenet_v2"), ("densenet121", "densenet121")]:
            self.assertEqual(m.get(t), v, t)
        self.assertNotIn("resnet50d", m)
        ev = tt.load_evidence()
        for p in ev["confirmed"]:
            self.assertLessEqual(abs(p["params_rel_diff"]), tt.PARAM_TOL, p["timm"])
            self.assertIsNotNone(p["tv_gmacs"])


if __name__ == "__main__":
    unittest.main()
