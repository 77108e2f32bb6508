"""The eager floor checked against public eager PyTorch measurements at the smallest batches they have.

At batch 1 eager PyTorch is host-bound on every current GPU: the latency is the per-op dispatch, and the
page shows the same figure for most GPUs. Whether that floor is right is a question for the rows measured
there: DeepLearningExamples' ResNet-50 sweeps at batch 1 and 8 (T4, V100), HELP's NAS-Bench-201 cells at
batch 1 (five GPUs), and timm's smallest batch per model and device (large: timm benchmarks throughput).

Two predictors on the same rows: the roofline (its eager dispatch constant comes from kernel harnesses,
never fitted on these rows) on every row, and `auto` (what the page shows) on rows of held-out model
families only, since the learned predictors trained on the rest. The figures go into docs/accuracy.md's
generated section and into docs/eager-floor.json, which the page's provenance section reads.
"""
from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd

from scripts import paths
from scripts.roofline.perfcard_eval import run_queries
from scripts.training import report, rows as trows

JSON = os.path.join(paths.DOCS, "eager-floor.json")
# (source, batch or "smallest", what the rows are)
CHECKS = (
    ("dle", 1, "DeepLearningExamples ResNet-50, batch 1"),
    ("dle", 8, "DeepLearningExamples ResNet-50, batch 8"),
    ("help_gpu", 1, "HELP NAS-Bench-201 cells, batch 1"),
    ("timm", "smallest", "timm, each model's smallest batch on each device"),
)


def rows_of(df: pd.DataFrame) -> pd.DataFrame:
    """The eager rows of each check, with the check's index in `check`."""
    df = df[df.runtime == "pytorch-eager"].copy()
    df["batch"] = df.dims.map(lambda d: json.loads(d).get("batch"))
    picked = []
    for i, (source, batch, _) in enumerate(CHECKS):
        s = df[df.source == source]
        if batch == "smallest":
            s = s[s.batch == s.groupby(["device_id", "model", "precision"]).batch.transform("min")]
        else:
            s = s[s.batch == batch]
        picked.append(s.assign(check=i))
    return pd.concat(picked, ignore_index=True)


def measure(df: pd.DataFrame) -> dict:
    """The figures of every check: rows, devices, batches, host-bound share, roofline MAPE and tau on all
    rows, auto's on held-out rows."""
    rows = rows_of(df)
    res = run_queries([dict(q, predictor="auto") for q in trows.queries(rows)])
    rows["auto_ms"] = [r["latency_ms"] for r in res]
    rows["host_bound"] = [r["host_bound"] for r in res]  # the core's rule (roofline.h host_bound)
    out = []
    for i, (source, batch, what) in enumerate(CHECKS):
        g = rows[rows.check == i]
        held = g[g.split == "test"]
        out.append({
            "source": source, "what": what, "rows": int(len(g)), "devices": sorted(g.device_id.unique()),
            "batches": sorted(int(b) for b in g.batch.unique()),
            "host_bound_share": float(g.host_bound.mean()) if len(g) else None,
            "roofline_mape": float(report.ape(g.roofline_ms, g.latency_ms).mean()) if len(g) else None,
            "roofline_median_ratio": float(np.median(g.roofline_ms / g.latency_ms)) if len(g) else None,
            "roofline_tau": report.mean_tau(g, "roofline_ms"),
            "auto_heldout_rows": int(len(held)),
            "auto_heldout_mape": float(report.ape(held.auto_ms, held.latency_ms).mean()) if len(held) else None,
        })
    # Rounded: the page shows 2-3 digits, and --check compares the file with a fresh run.
    out = [{k: round(v, 4) if isinstance(v, float) else v for k, v in c.items()} for c in out]
    return {"generated_by": "/usr/bin/python3 -m scripts.training.evaluate --update-doc",
            "host_bound": "the device busy less than half of the latency (the core's host_bound)", "checks": out}


def lines(figures: dict) -> list[str]:
    out = ["### The eager floor at the smallest public batches", "",
           "Eager PyTorch at small batch is host-bound: the latency is per-op dispatch, the same on most GPUs. "
           "These rows check that floor where it was measured (`scripts/training/eager_floor.py`). The roofline "
           "on every row (its dispatch constant comes from kernel harnesses, not from these rows); `auto` (the "
           "page's default) on held-out model families only. Ratio: median predicted / measured.", "",
           "| rows | n | devices | host-bound (predicted) | roofline MAPE | roofline ratio | roofline tau | "
           "auto MAPE, held-out rows |", "|---|---:|---|---:|---:|---:|---:|---|"]
    for c in figures["checks"]:
        if not c["rows"]:
            out.append(f"| {c['what']} | 0 | | | | | | |")
            continue
        auto = f"{report.fmt_pct(c['auto_heldout_mape'])} ({c['auto_heldout_rows']} rows)" if c["auto_heldout_rows"] \
            else "none held out (trained on)"
        out.append(f"| {c['what']} | {c['rows']} | {', '.join(c['devices'])} | {c['host_bound_share']:.0%} | "
                   f"{report.fmt_pct(c['roofline_mape'])} | {c['roofline_median_ratio']:.2f} | "
                   f"{report.fmt_tau(c['roofline_tau'])} | {auto} |")
    return out + [""]


def write(figures: dict) -> None:
    with open(JSON, "w") as f:
        json.dump(figures, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"updated {JSON}")


def committed() -> dict | None:
    if not os.path.exists(JSON):
        return None
    with open(JSON) as f:
        return json.load(f)
