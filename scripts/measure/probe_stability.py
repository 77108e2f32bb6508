"""How steady the native probe is on one machine, beside onnxruntime on the same machine at the same moments.

`perfcard predict --device this-machine` predicts from a probe taken when it runs (the median of 5, `perfcard
probe --cpu`), so the probe's own variation is part of that row's error: a probe that reads 20% low makes a
prediction 20% slow while onnxruntime runs as before. This script takes turns, for --minutes on a quiet
machine: the probe, then onnxruntime-node on two fixed configurations (ResNet-18 at batch 1 on one thread, the
campaign's reference; ResNet-50 at batch 1 on every core), and appends one row per turn to
data/measured/probe_stability.csv. --report prints, per machine, the spread of each series and how far the
probe's ratio to its median strays from onnxruntime's (the error a probe adds to a this-machine row).

    /usr/bin/python3 -m scripts.measure.probe_stability --minutes 30 [--every 20]
    /usr/bin/python3 -m scripts.measure.probe_stability --report
"""
from __future__ import annotations

import argparse
import csv
import datetime
import os
import sys
import time

import pandas as pd

from scripts import paths
from scripts.measure import campaign, machines

CSV = os.path.join(paths.MEASURED, "probe_stability.csv")
# (column, model, threads: 0 = every core): onnxruntime's side of each turn.
TIMED = (("resnet18_t1_ms", "resnet18", 1), ("resnet50_all_ms", "resnet50", 0))
FIELDS = ["timestamp", "machine_id", "gemm_gflops", "stream_gbs", "gemm_min", "gemm_max", "cores", "load_1m"] + \
         [c for c, _, _ in TIMED] + ["ort_version"]


def probe() -> dict:
    doc = machines.probe_cpu()
    gemm = [r["gemm_gflops"] for r in doc["runs"]]
    return {"gemm_gflops": round(doc["gemm_gflops"], 3), "stream_gbs": round(doc["stream_gbs"], 3),
            "gemm_min": round(min(gemm), 3), "gemm_max": round(max(gemm), 3), "cores": doc["device"]["cores"]["value"]}


def run(minutes: float, every: float, csv_path: str = CSV) -> int:
    mid = machines.describe()["machine_id"]
    new = not os.path.exists(csv_path)
    deadline, turns = time.time() + minutes * 60, 0
    with campaign.Materialized() as path_of, open(csv_path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        if new:
            w.writeheader()
        while time.time() < deadline:
            start = time.time()
            row = {"timestamp": datetime.datetime.now().isoformat(timespec="seconds"), "machine_id": mid, **probe()}
            for col, model, threads in TIMED:
                r = campaign.measure(path_of(model), 1, 0, 0, threads or row["cores"])
                row[col] = round(r["median_ms"], 4)
                row["ort_version"] = r["ort_version"]
            row["load_1m"] = round(os.getloadavg()[0], 2)
            w.writerow(row)
            f.flush()
            turns += 1
            print(f"{row['timestamp']} probe {row['gemm_gflops']:.1f} GFLOP/s {row['stream_gbs']:.1f} GB/s  "
                  + "  ".join(f"{c} {row[c]:.2f}" for c, _, _ in TIMED), flush=True)
            time.sleep(max(0.0, every - (time.time() - start)))
    return turns


# The turns' own work keeps the 1-minute load near 0.6 on 2 cores; a turn above MAX_LOAD was taken while
# something else ran (seen: the first turns after a build was stopped), which is not the probe's own variation.
MAX_LOAD = 1.0


def report(df: pd.DataFrame, max_load: float = MAX_LOAD) -> list[str]:
    """Per machine: each series' spread (median and p10-p90 of value / its median), and the error a probe adds
    to a prediction: for each turn, (onnxruntime's speed / its median) / (the probe's matrix rate / its median)
    - 1. A prediction goes as 1 / the probe's rate (compute-bound models), so this is how far a prediction made
    from that turn's probe strays from that turn's measurement, beyond an error common to every turn. Only the
    matrix rate is used: the memory-bound part of a prediction goes as 1 / the read rate, which moves less.
    Turns at a 1-minute load above max_load are left out and counted."""
    out = ["| machine | turns | left out (load) | series | median | p10 / median | p90 / median |",
           "|---|---:|---:|---|---:|---:|---:|"]
    added = ["| machine | against | turns | median | p10 | p90 | farthest |", "|---|---|---:|---:|---:|---:|---:|"]
    for mid, every in df.groupby("machine_id"):
        d = every[every.load_1m <= max_load]
        if d.empty:
            continue
        for col in ["gemm_gflops", "stream_gbs"] + [c for c, _, _ in TIMED]:
            x = d[col].astype(float)
            r = x / x.median()
            out.append(f"| {mid} | {len(d)} | {len(every) - len(d)} | {col} | {x.median():.2f} | {r.quantile(0.1):.3f} | "
                       f"{r.quantile(0.9):.3f} |")
        g = d.gemm_gflops / d.gemm_gflops.median()
        for col, _, _ in TIMED:
            speed = d[col].median() / d[col]  # > 1 where onnxruntime ran faster than usual
            e = speed / g - 1
            far = e[e.abs().idxmax()]
            added.append(f"| {mid} | {col} | {len(d)} | {100 * e.median():+.1f}% | {100 * e.quantile(0.1):+.1f}% | "
                         f"{100 * e.quantile(0.9):+.1f}% | {100 * far:+.1f}% |")
    return out + [""] + added


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=30)
    ap.add_argument("--every", type=float, default=20, help="seconds from one turn's start to the next's")
    ap.add_argument("--report", action="store_true", help="print the summary of the rows recorded and exit")
    ap.add_argument("--csv", default=CSV)
    args = ap.parse_args(argv)
    if args.report:
        print("\n".join(report(pd.read_csv(args.csv))))
        return 0
    if not os.path.exists(paths.CLI):
        raise SystemExit(f"{paths.CLI} is missing: build first (bash scripts/build.sh --native-only)")
    print(f"{run(args.minutes, args.every, args.csv)} turns written to {args.csv}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
