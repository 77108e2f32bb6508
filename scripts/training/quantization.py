"""The measured cost of storing a learned network smaller: the same trained network written as f32, f16 and
q8_0 weights files, each run by the core (`perfcard eval` on a copy of weights/ holding that file) on the
held-out rows. Per storage: MAPE per source, the largest relative difference of its predictions from the
f32 file's, and the file's size. Training scripts store the result in the shipped file's metadata
("quantization.heldout"), where scripts/training/report.py reads it for docs/accuracy.md.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile

import numpy as np
import pandas as pd

from scripts import paths
from scripts.roofline.perfcard_eval import run_queries
from scripts.training import rows as trows
from scripts.weights import update_manifest

STORAGES = ("f32", "f16", "q8_0")
KEY = "quantization.heldout"


@contextlib.contextmanager
def weights_with(files: dict[str, bytes]):
    """A scratch copy of weights/ with `files` (name -> bytes) in place of the committed ones and a manifest
    of its own: the directory to pass as `perfcard eval --weights`."""
    with tempfile.TemporaryDirectory() as tmp:
        for f in os.listdir(paths.WEIGHTS):
            if f != "manifest.json" and (f.endswith(".json") or f.endswith(".pcwt")):
                shutil.copy2(os.path.join(paths.WEIGHTS, f), tmp)
        for name, data in files.items():
            with open(os.path.join(tmp, name), "wb") as f:
                f.write(data)
        with open(os.path.join(tmp, "manifest.json"), "w") as f:
            f.write(update_manifest.render(update_manifest.build(tmp)))
        yield tmp


def core_latency(data: bytes, name: str, rows: pd.DataFrame) -> np.ndarray:
    """The core's latency for the rows with `data` as weights/<name>.pcwt, the other files as committed."""
    with weights_with({f"{name}.pcwt": data}) as tmp:
        res = run_queries([dict(q, predictor=name) for q in trows.queries(rows)], weights_dir=tmp)
    return np.array([r["latency_ms"] for r in res])


def heldout(files: dict[str, bytes], name: str, test: pd.DataFrame) -> dict:
    """{storage: {"mape": {source: MAPE}, "max_rel_diff_vs_f32", "bytes"}} for files keyed by STORAGES."""
    pred = {s: core_latency(data, name, test) for s, data in files.items()}
    meas = test.latency_ms.to_numpy()
    out = {}
    for s, p in pred.items():
        e = np.abs(p / meas - 1)
        out[s] = {"mape": {src: float(e[(test.source == src).to_numpy()].mean()) for src in sorted(test.source.unique())},
                  "max_rel_diff_vs_f32": float(np.max(np.abs(p / pred["f32"] - 1))), "bytes": len(files[s])}
    return out


def printable(q: dict) -> list[str]:
    return [f"  {s}: {v['bytes']} bytes, largest difference from f32 {v['max_rel_diff_vs_f32']:.2%}, MAPE " +
            ", ".join(f"{src} {m:.1%}" for src, m in v["mape"].items()) for s, v in q.items()]


def of_file(metadata: dict) -> dict | None:
    """The measurement a weights file's metadata carries, or None (a file trained before it was measured)."""
    return json.loads(metadata[KEY]) if KEY in metadata else None
