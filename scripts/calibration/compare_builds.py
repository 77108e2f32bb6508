"""Two builds of the CLI on our own onnxruntime-node rows: held-out accuracy before and after a change to
costs or plans, with the same fitted constants, per zoo set and model family. For a change that moves
features (costs, kernel plans) before the constants are refitted on it: how far the shipped constants
drift, and where.

    /usr/bin/python3 -m scripts.calibration.compare_builds OLD_CLI [NEW_CLI] [--sets transformers,classic]

NEW_CLI defaults to build/native/core/perfcard. Rows are the drift-free rows of data/measured/cpu_ort_node.csv
whose zoo graph exists under scripts/zoo/out/ (export the sets you want first; the others are counted as
skipped). Prints MAPE, median APE and the mean ratio predicted / measured for each build.
"""
import argparse

import numpy as np

from scripts import paths
from scripts.roofline.cpu_rows import ort_queries, ort_rows
from scripts.roofline.perfcard_eval import run_queries


def predict(cli, queries):
    return np.array([r["latency_ms"] for r in run_queries(queries, cli_path=cli)], float)


def summary(pred, meas):
    ok = np.isfinite(pred)
    ape = np.abs(pred[ok] - meas[ok]) / meas[ok]
    return (f"MAPE {100 * ape.mean():6.1f}%  median {100 * np.median(ape):5.1f}%  "
            f"pred/meas {np.mean(pred[ok] / meas[ok]):5.2f}" if ok.any() else "no rows")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old_cli")
    ap.add_argument("new_cli", nargs="?", default=paths.CLI)
    ap.add_argument("--sets", default="", help="comma-separated zoo sets (classic, torchvision, transformers, nasbench201)")
    args = ap.parse_args()
    df, _ = ort_rows()
    if args.sets:
        df = df[df.zoo_set.isin(args.sets.split(","))].reset_index(drop=True)
    print(f"{len(df)} drift-free rows of this machine, each with its zoo graph")
    queries = ort_queries(df)
    meas = df.latency_ms.to_numpy(float)
    old, new = predict(args.old_cli, queries), predict(args.new_cli, queries)
    groups = [("all", np.ones(len(df), bool))]
    groups += [(f"set {s}", (df.zoo_set == s).to_numpy()) for s in sorted(df.zoo_set.unique())]
    groups += [(f"  {f}", (df.family == f).to_numpy()) for f in sorted(df.family.unique())]
    for name, mask in groups:
        print(f"{name:<22} rows {int(mask.sum()):5d}   before: {summary(old[mask], meas[mask])}   "
              f"after: {summary(new[mask], meas[mask])}")


if __name__ == "__main__":
    main()
