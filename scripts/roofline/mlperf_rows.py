"""MLPerf Inference results matched to zoo graphs, as `perfcard eval` queries (never fitted on).

Kept: closed division, VALID, one accelerator in the catalog, benchmarks with a zoo graph:
  resnet50  (torchvision resnet50, 224x224)        SingleStream latency at batch 1; Offline samples/s
  bert-99 / bert-99.9 (zoo bert-large-uncased)      Offline samples/s at sequence 384 (SQuAD v1.1 max length)
MLPerf runs TensorRT (fused, INT8 for resnet50 and bert-99, FP16 for bert-99.9) and states no batch size in
its results; PerfCard's closest runtime is `kernel` (no host dispatch: TensorRT replays a prebuilt engine),
without TensorRT's layer fusion. Offline throughput is predicted as OFFLINE_BATCH / latency at that batch.
"""
import os

import pandas as pd

from scripts import paths

ZOO = paths.ZOO_OUT
GRAPHS = {"resnet50": os.path.join(ZOO, "resnet50.onnx"),
          "bert-99": os.path.join(ZOO, "transformers", "bert-large-uncased.onnx"),
          "bert-99.9": os.path.join(ZOO, "transformers", "bert-large-uncased.onnx")}
PRECISION = {"resnet50": "int8", "bert-99": "int8", "bert-99.9": "fp16"}  # NVIDIA's closed submissions
DIMS = {"resnet50": {}, "bert-99": {"sequence": 384}, "bert-99.9": {"sequence": 384}}
OFFLINE_BATCH = 256  # an assumption: MLPerf's results omit batch sizes (NVIDIA's configs use 32..2048)
RUNTIME = "kernel"


def mlperf_rows():
    from scripts.data.sources import load_mlperf_inference_results
    d = load_mlperf_inference_results()
    d = d[(d.n_devices == 1) & (d.in_catalog == True) & (d.mlperf_division == "closed")  # noqa: E712
          & (d.mlperf_result_valid == "VALID") & d.model.isin(GRAPHS)].copy()
    ss = d[(d.model == "resnet50") & (d.mlperf_scenario == "singlestream") & d.latency_ms.notna()].copy()
    ss["target"], ss["measured"], ss["batch"] = "latency_ms", ss.latency_ms, 1
    off = d[(d.mlperf_scenario == "offline") & d.throughput_per_s.notna()
            & (d.throughput_unit == "samples/s")].copy()
    off["target"], off["measured"], off["batch"] = "samples_per_s", off.throughput_per_s, OFFLINE_BATCH
    out = pd.concat([ss, off], ignore_index=True)
    out = out[out.model.map(lambda m: os.path.exists(GRAPHS[m]))]
    return out.reset_index(drop=True)


def mlperf_queries(df):
    return [{"model": GRAPHS[m], "dims": {"batch": int(b), **DIMS[m]}, "device": d, "precision": PRECISION[m],
             "runtime": RUNTIME} for m, b, d in zip(df.model, df.batch, df.device_id)]


def predicted_target(df, results):
    """Predicted value in the row's target unit (latency per query, or samples per second)."""
    lat = pd.Series([r["latency_ms"] for r in results], index=df.index)
    return lat.where(df.target == "latency_ms", df.batch / (lat / 1e3))
