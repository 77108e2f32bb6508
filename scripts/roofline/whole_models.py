"""Public whole-model measurements matched to zoo graphs, as prediction queries.

A row is used only when its model is the same architecture as a zoo graph (scripts/data's confirmed
timm<->torchvision map when present, else identical names), at the zoo graph's input size, measured
in eager mode (torch.compile rows are another runtime). Splits are by model family, never by row.
"""
import gzip
import hashlib
import json
import os

import pandas as pd

from scripts import paths

PUBLIC = paths.SHARED_DATA
ZOO = paths.ZOO_OUT
MAP = os.path.join(paths.SCRIPTS, "data", "timm_torchvision_map.json")

# timm device labels -> catalog ids ("pro6000maxq": the RTX PRO 6000 Blackwell Max-Q workstation edition).
TIMM_DEVICES = {"rtx3090": "rtx3090", "rtx4090": "rtx4090", "4090": "rtx4090", "5090": "rtx5090",
                "pro6000maxq": "rtx-pro-6000-blackwell"}
TIMM_PRECISION = {"amp": "fp16", "fp32": "fp32", "amp_bf16": "bf16", "bf16": "bf16"}


def family_split(family, test_fraction=0.3):
    h = int(hashlib.sha1(family.encode()).hexdigest()[:8], 16)
    return "test" if (h % 1000) < test_fraction * 1000 else "train"


def zoo_manifest():
    path = os.path.join(ZOO, "manifest.json")
    if not os.path.exists(path):
        raise SystemExit(f"{path} is missing: export the zoo first (/usr/bin/python3 -m scripts.zoo.export_torchvision)")
    with open(path) as f:
        return json.load(f)["models"]


def timm_to_zoo(zoo):
    """timm model name -> zoo model name."""
    mapping = {}
    if os.path.exists(MAP):
        with open(MAP) as f:
            doc = json.load(f)
        for p in doc.get("confirmed", []):
            t, v = p.get("timm"), p.get("torchvision")
            if t and v and p.get("confirmed", True):
                mapping[t] = v
    for name in zoo:  # identical names are the same architecture in both libraries where they exist
        mapping.setdefault(name, name)
    return {t: v for t, v in mapping.items() if v in zoo}


def timm_rows(mode="infer"):
    """timm's eager NCHW rows of `mode` ("infer", or "train": forward, loss, backward and an SGD step)."""
    zoo = zoo_manifest()
    t2z = timm_to_zoo(zoo)
    df = pd.read_csv(os.path.join(PUBLIC, "timm_benchmarks_long.csv.gz"))
    df = df[(df["mode"] == mode) & (~df["compiled"].astype(bool)) & (df["layout"] == "nchw")]
    df = df[df["device"].isin(TIMM_DEVICES) & df["precision"].isin(TIMM_PRECISION) & df["model"].isin(t2z)].copy()
    df["zoo"] = df["model"].map(t2z)
    df = df[df["img_size"] == df["zoo"].map(lambda z: zoo[z]["input_size"])]
    df["device_id"] = df["device"].map(TIMM_DEVICES)
    df["prec"] = df["precision"].map(TIMM_PRECISION)
    df["family"] = df["zoo"].map(lambda z: zoo[z]["family"])
    df["split"] = df["family"].map(family_split)
    df["latency_ms"] = df["step_time_ms"]
    df["source"] = "timm"
    return df


def queries(df):
    return [{"model": os.path.join(ZOO, f"{z}.onnx"), "dims": {"batch": int(b)}, "device": d, "precision": p,
             "runtime": "pytorch-eager"}
            for z, b, d, p in zip(df["zoo"], df["batch_size"], df["device_id"], df["prec"])]


# DeepLearningExamples' eager PyTorch ResNet-50 v1.5 (= torchvision resnet50) batch sweeps. The V100 16 GB
# SXM2 of a DGX-1 is the catalog's V100 SXM2 chip with less memory: same clocks and bandwidth, so its
# latencies are compared with v100-sxm2-32gb predictions.
DLE_MODELS = {"resnet50v1.5": "resnet50"}
DLE_DEVICES = {"v100-sxm2-16gb": "v100-sxm2-32gb", "v100-sxm2-32gb": "v100-sxm2-32gb", "t4": "t4",
               "a100-sxm4-40gb": "a100-sxm4-40gb", "a100-sxm4-80gb": "a100-sxm4-80gb"}
DLE_PRECISION = {"amp": "fp16", "fp16": "fp16", "fp32": "fp32", "tf32": "fp32"}


def dle_rows():
    from scripts.data.sources import load_nvidia_dle_readme_perf_tables
    zoo = zoo_manifest()
    d = load_nvidia_dle_readme_perf_tables()
    d = d[(d.runtime == "pytorch") & (d["mode"] == "inference") & d.model.isin(DLE_MODELS)
          & d.device_id.isin(DLE_DEVICES) & d.precision.isin(DLE_PRECISION) & d.latency_ms.notna()
          & (d.latency_kind == "per_batch_step")].copy()
    d["zoo"] = d.model.map(DLE_MODELS)
    d = d[d.zoo.isin(zoo)]
    d["device_id"] = d.device_id.map(DLE_DEVICES)
    d["prec"] = d.precision.map(DLE_PRECISION)
    d["batch_size"] = d.batch.astype(int)
    d["family"] = d.zoo.map(lambda z: zoo[z]["family"])
    d["source"] = "dle"
    return d.drop_duplicates(["zoo", "device_id", "prec", "batch_size", "latency_ms"])
