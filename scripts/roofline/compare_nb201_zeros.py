"""The roofline on HELP's NAS-Bench-201 GPU rows with the zoo's two forms of a `none` edge, same rows:

    nice -n 19 /usr/bin/python3 -m scripts.roofline.compare_nb201_zeros [--sample 1000]

"computed" is NAS-Bench-201's own code (every edge runs, `none` multiplies by 0, a node sums all of its edges
from 0), what the zoo builds since 2026-11-28; "dropped" leaves `none` edges out, as the zoo did before
(scripts/zoo/nasbench201.py). The rows are the learned predictors' HELP rows (scripts/training/rows.py: a
seeded sample of cells, train and held-out families together: the roofline's constants were fitted on
neither). Prints, per device and batch, the roofline's MAPE, median signed error and Kendall's tau-b for each
form. Nothing is written.
"""
from __future__ import annotations

import argparse
import os
import tempfile

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

from scripts.roofline.perfcard_eval import run_queries
from scripts.training import help_ceiling, rows as trows
from scripts.zoo import graph_only
from scripts.zoo import nasbench201 as nb


def roofline_ms(rows: pd.DataFrame) -> np.ndarray:
    return np.array([r["latency_ms"] for r in run_queries(trows.queries(rows, predictor="roofline"))])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sample", type=int, default=1000)
    args = ap.parse_args(argv)
    rows = help_ceiling.with_cell(trows.help_gpu_rows(args.sample).reset_index(drop=True))
    archs = nb.help_archs()
    with tempfile.TemporaryDirectory() as tmp:
        dropped = {}
        for i in sorted(rows.cell.unique()):
            path = os.path.join(tmp, f"{nb.graph_id(i, 'dropped')}.onnx")
            graph_only.save(nb.build_model(archs[i], zeros="dropped", graph_name=nb.graph_id(i, "dropped")), path)
            dropped[i] = path
        pred = {"computed": roofline_ms(rows), "dropped": roofline_ms(rows.assign(model=rows.cell.map(dropped)))}
    y = rows.latency_ms.to_numpy()
    print("| device | batch | rows | " + " | ".join(f"{f}: MAPE | median signed | tau" for f in pred) + " |")
    print("|---|---:|---:|" + "---:|" * 3 * len(pred))
    for (dev, b), g in rows.groupby(["device_id", "batch"]):
        i = g.index.to_numpy()
        cells = []
        for p in pred.values():
            r = p[i] / y[i] - 1
            cells += [f"{np.mean(np.abs(r)):.1%}", f"{np.median(r):+.1%}", f"{kendalltau(p[i], y[i])[0]:.3f}"]
        print(f"| {dev} | {b} | {len(g)} | " + " | ".join(cells) + " |")
    for name, p in pred.items():
        r = p / y - 1
        print(f"all rows, {name}: MAPE {np.mean(np.abs(r)):.1%}, median signed {np.median(r):+.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
