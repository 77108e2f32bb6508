"""Labelled rows for the learned predictors: every measurement that matches a zoo graph and a catalog
device, with the query that predicts it and the feature row the core computes for it.

Sources (the same rows and splits the roofline's evaluation uses, scripts/roofline/):
  timm       timm's eager inference benchmark (RTX 3090 / 4090; fp16, bf16, fp32)       whole_models.timm_rows
  dle        NVIDIA DeepLearningExamples eager PyTorch ResNet-50 sweeps (T4, V100)       whole_models.dle_rows
  cpu_ours   our onnxruntime-node measurements of the build VM (1-2 threads)            cpu_rows.ort_rows
  web_ours   our onnxruntime-web measurements (wasm, 1 thread, node and Chromium), each   cpu_rows.web_rows
             on its machine's probe entry: the page's "this device" row (device family "browser")
  help_gpu   HELP's NAS-Bench-201 latencies on five GPUs at batch 1, 32, 256 (PyTorch, fp32; a seeded
             sample of cells)
  gpu_ours   our GPU campaigns' no_grad inference rows (H100, H200; PyTorch 2.11 eager)    gpu_ours_rows
HELP's CPU rows are left out: PyTorch on CPU is a runtime PerfCard does not model (docs/accuracy.md).

The features come from `perfcard eval` (queries with "features": true): the C++ core computes them, this
module only joins them to labels. Split: by model family (30% of families held out, as the roofline's
evaluation); a NAS-Bench-201 cell is its own family.
"""
from __future__ import annotations

import csv
import gzip
import json
import os

import numpy as np
import pandas as pd

from scripts import paths
from scripts.roofline import cpu_rows, whole_models
from scripts.roofline.perfcard_eval import run_queries
from scripts.roofline.whole_models import family_split

HELP_CSV = paths.shared("help_latency_long.csv.gz")
# HELP's GPU keys -> catalog ids. HELP does not say which TITAN X 'titanx' is; taken as the TITAN X (Pascal),
# the GP102 card sold beside the TITAN Xp it also lists (an assumption: the LODO table shows its error).
HELP_GPUS = {"1080ti": "gtx1080ti", "2080ti": "rtx2080ti", "titan_rtx": "titan-rtx", "titanx": "titanx-pascal",
             "titanxp": "titanxp"}
SOURCES = ("timm", "dle", "cpu_ours", "web_ours", "help_gpu", "gpu_ours")


def schema() -> dict:
    """The core's feature schema: {"version", "hash", "features": [{"name", "meaning"}]}."""
    import subprocess
    from scripts.roofline.perfcard_eval import cli
    out = subprocess.run([cli(), "features", "--schema", "--json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def _frame(source, family, model, dims, device, precision, runtime, threads, latency_ms, split=None, group=None,
           spread=np.nan):
    """spread: the row's run-to-run spread, (p90 - p10) / median, where the source records it (our own
    campaigns); NaN elsewhere. Only the reports read it (error against measurement noise), never a fit."""
    df = pd.DataFrame({"model": model, "device_id": device, "precision": precision, "runtime": runtime,
                       "threads": threads, "latency_ms": latency_ms, "family": family, "spread": spread})
    df["dims"] = [json.dumps(d, sort_keys=True) for d in dims]
    df["source"] = source
    df["split"] = split if split is not None else df.family.map(family_split)
    df["group"] = group if group is not None else df.family
    return df


def timm_rows() -> pd.DataFrame:
    d = whole_models.timm_rows()
    qs = whole_models.queries(d)
    return _frame("timm", d.family.values, [q["model"] for q in qs], [q["dims"] for q in qs], d.device_id.values,
                  d.prec.values, "pytorch-eager", 0, d.latency_ms.values)


def dle_rows() -> pd.DataFrame:
    d = whole_models.dle_rows()
    return _frame("dle", d.family.values, [os.path.join(paths.ZOO_OUT, f"{z}.onnx") for z in d.zoo],
                  [{"batch": int(b)} for b in d.batch_size], d.device_id.values, d.prec.values, "pytorch-eager", 0,
                  d.latency_ms.values)


def cpu_ours_rows() -> pd.DataFrame:
    d, _ = cpu_rows.ort_rows()
    qs = cpu_rows.ort_queries(d)
    return _frame("cpu_ours", d.family.values, [q["model"] for q in qs], [q["dims"] for q in qs], d.device_id.values,
                  "fp32", "onnxruntime", [q["threads"] for q in qs], d.latency_ms.values, spread=d.spread.values)


def web_ours_rows() -> pd.DataFrame:
    d, _ = cpu_rows.web_rows()
    qs = cpu_rows.ort_queries(d, runtime="onnxruntime-web")
    return _frame("web_ours", d.family.values, [q["model"] for q in qs], [q["dims"] for q in qs], d.device_id.values,
                  "fp32", "onnxruntime-web", [q["threads"] for q in qs], d.latency_ms.values, spread=d.spread.values)


def gpu_ours_rows() -> pd.DataFrame:
    """Our GPU campaign's no_grad inference rows (data/measured/gpu_<device>_torch.csv): PyTorch eager on the
    lent H100/H200 at each precision and batch the campaign measured (torch.compile's rows are not loaded).
    The other protocols are training steps, which the learned predictors do not answer; the campaign's query
    (scripts/calibration/evaluate_gpu_ours.py) is the one every report asks."""
    from scripts.calibration.evaluate_gpu_ours import load as load_gpu, query
    got = [r for r in load_gpu()[0] if r["protocol"] == "inference"]
    if not got:
        return pd.DataFrame()
    qs = [query(r, "roofline") for r in got]
    return _frame("gpu_ours", [r["family"] for r in got], [q["model"] for q in qs], [q["dims"] for q in qs],
                  [q["device"] for q in qs], [q["precision"] for q in qs], "pytorch-eager", 0,
                  [r["median_ms"] for r in got],
                  spread=[(float(r["p90_ms"]) - float(r["p10_ms"])) / r["median_ms"] if r.get("p10_ms") and r.get("p90_ms")
                          else np.nan for r in got])


def help_gpu_labels(path: str = HELP_CSV):
    """(device_id, batch, arch index, arch string, latency_ms) of every NB201 cell HELP timed on its GPUs."""
    with gzip.open(path, "rt", newline="") as f:
        for r in csv.DictReader(f):
            if r["search_space"] != "nasbench201":
                continue
            dev, _, b = r["device_batch"].rpartition("_")
            if dev in HELP_GPUS and b.isdigit():
                yield HELP_GPUS[dev], int(b), int(r["arch_index"]), r["arch_str"], float(r["latency_ms"])


def help_gpu_rows(sample: int = 1000, seed: int = 0) -> pd.DataFrame:
    """HELP's NB201 GPU latencies of a seeded sample of the manifest's cells (the same on every clone)."""
    files = cpu_rows.help_cells(sample, seed)
    rows = [(i, files[i], dev, b, lat) for dev, b, i, _, lat in help_gpu_labels() if i in files]
    cell, model, device, batch, lat = zip(*rows)
    fam = [f"nasbench201:{i}" for i in cell]
    return _frame("help_gpu", fam, list(model), [{"batch": b} for b in batch], list(device), "fp32", "pytorch-eager",
                  0, list(lat))


def load(sources=SOURCES, help_sample: int = 1000) -> tuple[pd.DataFrame, list[str]]:
    """All rows with their roofline prediction and feature row; and the sources that had no rows (zoo
    graphs not exported, or data missing), by name, for the caller to report."""
    makers = {"timm": timm_rows, "dle": dle_rows, "cpu_ours": cpu_ours_rows, "web_ours": web_ours_rows,
              "help_gpu": lambda: help_gpu_rows(help_sample), "gpu_ours": gpu_ours_rows}
    frames, missing = [], []
    for s in sources:
        try:
            df = makers[s]()
        except SystemExit as e:  # a zoo manifest is missing: say which, keep the others
            print(f"{s}: no rows ({e})")
            df = pd.DataFrame()
        if len(df) == 0:
            missing.append(s)
            continue
        df = df[df.model.map(os.path.exists)]
        frames.append(df)
    rows = pd.concat(frames, ignore_index=True)
    rows = rows[rows.latency_ms > 0].reset_index(drop=True)
    res = run_queries(queries(rows, features=True))
    rows["roofline_ms"] = [r["latency_ms"] for r in res]
    rows["device_family"] = [r["family"] for r in res]
    x = np.array([[np.nan if v is None else v for v in r["features"]] for r in res], dtype=np.float32)
    return rows.assign(_x=list(x)), missing


def feature_matrix(rows: pd.DataFrame) -> np.ndarray:
    return np.stack(rows._x.values).astype(np.float32) if len(rows) else np.zeros((0, 0), np.float32)


def queries(rows: pd.DataFrame, **extra) -> list[dict]:
    """The `perfcard eval` query of each row (its model, dims, device, precision, runtime, threads), with
    `extra` keys added (predictor, features, graph, embedding)."""
    return [{"model": m, "dims": json.loads(d), "device": dev, "precision": p, "runtime": rt, "threads": int(t),
             **extra}
            for m, d, dev, p, rt, t in zip(rows.model, rows.dims, rows.device_id, rows.precision, rows.runtime,
                                           rows.threads)]


def one_version(results: list[dict], predictor: str) -> str:
    """The version the core names for the predictor's rows (it builds the string, not these scripts)."""
    versions = {r["version"] for r in results if r["predictor"] == predictor}
    if len(versions) != 1:
        raise SystemExit(f"expected one {predictor} version in the core's rows, got {sorted(versions)}")
    return versions.pop()


def score(rows: pd.DataFrame, names=("trees", "gnn", "transformer", "ensemble")) -> tuple[pd.DataFrame, dict[str, str]]:
    """The rows with each predictor's latency from the core (`<name>_ms`) and, from the ensemble, its
    calibrated band (band_lo, band_hi), out-of-distribution flag (ood) and its reasons (ood_reasons, comma-
    separated: the core's words); and each predictor's version."""
    out, versions = rows.copy(), {}
    qs = queries(rows)
    for name in names:
        res = run_queries([dict(q, predictor=name) for q in qs])
        out[f"{name}_ms"] = [r["latency_ms"] for r in res]
        versions[name] = one_version(res, name)
        if name == "ensemble":
            out["band_lo"] = [r.get("band_ms", [np.nan, np.nan])[0] for r in res]
            out["band_hi"] = [r.get("band_ms", [np.nan, np.nan])[1] for r in res]
            out["ood"] = [bool(r["out_of_distribution"]) for r in res]
            out["ood_reasons"] = [",".join(r.get("ood_reasons", [])) for r in res]
    return out, versions
