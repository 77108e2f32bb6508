"""Stage M: onnxruntime's memory on CPUs, fitted on the peak resident memory of our own runs.

    /usr/bin/python3 -m scripts.calibration.calibrate_ort_memory [--write]

Every row of data/measured/cpu_ort_node.csv records the peak resident memory (VmHWM) of the one process
that loaded and ran that configuration with onnxruntime-node. The model of it, evaluated by the core
(`perfcard eval` memory queries under the onnxruntime runtime, fp32):

    peak RSS = context + conv_weight_copies x convolution weights + weight_copies x other weights
               + (1 + allocator_overhead) x peak live activations

context: node, the onnxruntime library and its session (what a process holds before any model); a
convolution's weights are kept a second time, reordered for onnxruntime's blocked (NCHWc) kernels, while
the other weights are used in place (a first fit with one weight coefficient for all left conv-heavy
families 40-65% low and transformers high); the activations are the core's liveness peak (inputs held),
the factor onnxruntime's arena and memory pattern add. Rows whose peak RSS is below their weights' bytes are
left out: their weights were never all resident (mapped external data, or the campaign's bounded temporary
weights for large transformers).
Fitted by non-negative least squares on relative errors, scored leaving one model family out at a time
(fitted on every other family), per family and overall. Rows of every machine and drift flag count (drift
concerns timing, not memory). --write puts the constants fitted on every row into weights/roofline.json
(runtimes.onnxruntime, provenance stage_m) and refreshes the manifest.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

import numpy as np
import pandas as pd

from scripts import paths
from scripts.roofline.cpu_rows import ort_queries
from scripts.roofline.perfcard_eval import run_queries, write_constants

CSV = os.path.join(paths.MEASURED, "cpu_ort_node.csv")
DEVICE = "cpu-build-vm-amd-epyc-zen4"  # any CPU: the parts asked for do not depend on the device
MIB = 2.0 ** 20


def rows():
    df = pd.read_csv(CSV)
    df = df[df.peak_rss_mib.notna()].copy()
    df["graph"] = df.model.map(lambda z: os.path.join(paths.ZOO_OUT, f"{z}.onnx"))
    have = df.graph.map(os.path.exists)
    missing = int((~have).sum())
    return df[have].reset_index(drop=True), missing


def parts(df):
    """(convolution weights, other weights, activations) in bytes per row, from the core: the weights'
    parts come from two queries whose copy counts single one kind out."""
    queries = [{**q, "memory": {"mode": "inference"}} for q in ort_queries(df.assign(device_id=DEVICE))]
    with open(paths.ROOFLINE_JSON) as f:
        doc = json.load(f)
    out = []
    for conv, other in ((1.0, 0.0), (0.0, 1.0)):
        doc["runtimes"]["onnxruntime"].update(context_mb=0.0, workspace_mb=0.0, allocator_overhead=0.0,
                                              weight_copies=other, conv_weight_copies=conv)
        out.append(run_queries(queries, constants=doc))
    conv, other = out
    return (np.array([r["memory_bytes"]["weights"] for r in conv]), np.array([r["memory_bytes"]["weights"] for r in other]),
            np.array([r["memory_bytes"]["activations"] for r in conv]))


def fit(X, rss):
    """Non-negative coefficients of X's columns minimizing the relative squared error."""
    from scipy.optimize import nnls
    coef, _ = nnls(X / rss[:, None], np.ones_like(rss))
    return coef


def score(pred, rss):
    e = pred / rss - 1
    return {"rows": int(len(e)), "mape": round(100 * float(np.mean(np.abs(e))), 2),
            "worst": round(100 * float(e[np.argmax(np.abs(e))]), 1)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="write the constants fitted on every row into roofline.json")
    args = ap.parse_args(argv)
    df, missing = rows()
    if len(df) < 20:
        raise SystemExit(f"only {len(df)} rows with a zoo graph ({missing} without): export the zoo first")
    wc, wo, a = parts(df)
    rss = df.peak_rss_mib.values * MIB
    resident = rss >= wc + wo
    left_out = sorted(set(df.model[~resident]))
    df, wc, wo, a, rss = df[resident].reset_index(drop=True), wc[resident], wo[resident], a[resident], rss[resident]
    X = np.stack([np.ones_like(rss), wc, wo, a], axis=1)
    fams = sorted(df.family.unique())
    held = np.zeros(len(df))
    per_family = {}
    for fam in fams:
        test = (df.family == fam).values
        held[test] = X[test] @ fit(X[~test], rss[~test])
        per_family[fam] = score(held[test], rss[test])
    coef = fit(X, rss)
    overall = score(held, rss)
    median_family = round(statistics.median(v["mape"] for v in per_family.values()), 2)
    print(f"{len(df)} rows ({missing} without a zoo graph here; {int((~resident).sum())} whose weights were never all "
          f"resident: {', '.join(left_out)}), {len(fams)} families")
    print(f"fitted on every row: context {coef[0] / MIB:.1f} MiB, conv_weight_copies {coef[1]:.3f}, "
          f"weight_copies {coef[2]:.3f}, activations x {coef[3]:.3f}")
    print(f"leave one family out: MAPE {overall['mape']}% (worst {overall['worst']:+}%), median family {median_family}%")
    for fam, sc in per_family.items():
        print(f"  {fam:18s} {sc['rows']:5d} rows  MAPE {sc['mape']:6.2f}%  worst {sc['worst']:+.1f}%")
    if not args.write:
        return 0
    with open(paths.ROOFLINE_JSON) as f:
        doc = json.load(f)
    rt = doc["runtimes"]["onnxruntime"]
    rt.update(context_mb=round(coef[0] / MIB, 2), conv_weight_copies=round(coef[1], 4), weight_copies=round(coef[2], 4),
              allocator_overhead=round(max(0.0, coef[3] - 1), 4),
              source="peak resident memory of our onnxruntime-node runs (VmHWM), fitted by "
                     "scripts/calibration/calibrate_ort_memory.py (stage M): context = node + onnxruntime + session")
    prov = json.loads(doc["provenance"])
    prov["stage_m"] = {
        "script": "scripts/calibration/calibrate_ort_memory.py",
        "source": "data/measured/cpu_ort_node.csv peak_rss_mib (every machine, every row with a zoo graph)",
        "model": "context + conv_weight_copies x conv weights + weight_copies x other weights + (1 + allocator_overhead) "
                 "x peak live activations (core liveness)",
        "rows": int(len(df)), "rows_without_graph": missing, "families": len(fams),
        "left_out_not_resident": left_out,
        "fitted_on_all": {"context_mb": rt["context_mb"], "conv_weight_copies": rt["conv_weight_copies"],
                          "weight_copies": rt["weight_copies"], "allocator_overhead": rt["allocator_overhead"]},
        "leave_one_family_out": overall | {"median_family_mape": median_family},
        "per_family": per_family,
    }
    doc["provenance"] = json.dumps(prov, sort_keys=True)
    write_constants(doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
