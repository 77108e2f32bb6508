"""How well any predictor can rank HELP's NAS-Bench-201 cells, measured on HELP's own labels (issue 12's aim:
Kendall tau >= 0.9 between architectures on every held-out HELP device).

Every NB201 cell computes its six edges on tensors of one shape, so the work a cell does is fixed by how many
edges carry each op, whatever the wiring: 210 classes of op counts for the 15,625 cells. Two cells of one
class ran the same kernels; what separates their latencies is the measurement's own noise. The class's mean
latency over the *train* cells is then the best ordering of a held-out cell that the labels allow (a
predictor told the truth and nothing else), and its tau against the held-out labels is the ceiling the aim
is measured against. Nothing here is fitted on held-out rows, and nothing is shipped.

The same labels say what HELP's networks computed for a `none` edge: a least-squares cost per edge of each
op (over the 15 cells of the network) puts `none` a kernel above `skip_connect`, level with the pooling op,
as NAS-Bench-201's own code does it (its Zero op multiplies the input by 0 on every such edge, and a node
sums all of its edges); the zoo's graphs drop such an edge instead (scripts/zoo/nasbench201.py).
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd

from scripts.roofline.whole_models import family_split
from scripts.training import report, rows as trows
from scripts.zoo import nasbench201 as nb


def op_counts(arch: str) -> tuple[int, ...]:
    """How many of the cell's six edges carry each op of nb.OPS."""
    ops = [op for _, _, op in nb.parse_arch(arch)]
    return tuple(ops.count(o) for o in nb.OPS)


def labels() -> pd.DataFrame:
    """Every NB201 cell HELP measured on its GPUs: device_id, batch, cell, op-count class, latency_ms, split."""
    df = pd.DataFrame(trows.help_gpu_labels(), columns=["device_id", "batch", "cell", "arch", "latency_ms"])
    classes = {a: op_counts(a) for a in df.arch.unique()}
    df["cls"] = df.arch.map(classes)
    df["split"] = df.cell.map(lambda i: family_split(f"nasbench201:{i}"))
    return df


def class_means(lab: pd.DataFrame) -> pd.Series:
    """Mean latency per (device, batch, op-count class) over the train cells."""
    return lab[lab.split == "train"].groupby(["device_id", "batch", "cls"]).latency_ms.mean()


def with_cell(rows: pd.DataFrame) -> pd.DataFrame:
    """HELP rows (rows.help_gpu_rows) with their cell's arch index and their batch as columns of their own."""
    return rows.assign(cell=rows.family.str.split(":").str[1].astype(int),
                       batch=rows.dims.map(lambda d: json.loads(d)["batch"]))


def with_ceiling(test: pd.DataFrame, lab: pd.DataFrame) -> pd.DataFrame:
    """The held-out HELP rows of `test` with `class_ms`: their class's train mean (NaN where the class has no
    train cell on that device and batch)."""
    g = with_cell(test[test.source == "help_gpu"])
    arch = lab.drop_duplicates("cell").set_index("cell").cls
    keys = list(zip(g.device_id, g.batch, g.cell.map(arch)))
    g["class_ms"] = class_means(lab).reindex(keys).to_numpy()
    return g


def within_class_spread(lab: pd.DataFrame) -> pd.Series:
    """Per device: median |log(latency / its class's median)| over cells of classes with two or more cells."""
    key = ["device_id", "batch", "cls"]
    n = lab.groupby(key).latency_ms.transform("count")
    dev = np.abs(np.log(lab.latency_ms / lab.groupby(key).latency_ms.transform("median")))
    return dev[n > 1].groupby(lab.device_id[n > 1]).median()


def edge_costs(lab: pd.DataFrame) -> pd.DataFrame:
    """Per device and batch, the least-squares latency of one edge of each op over one of skip_connect (ms,
    for the network's 15 cells): latency ~ sum over ops of cost[op] * count[op] (counts sum to 6, so the
    network's fixed part is spread over the ops and only differences are meaningful)."""
    out = []
    for (dev, b), g in lab.groupby(["device_id", "batch"]):
        x = np.array(list(g.cls), np.float64)
        c = np.linalg.lstsq(x, g.latency_ms.to_numpy(), rcond=None)[0]
        skip = c[nb.OPS.index("skip_connect")]
        out.append({"device_id": dev, "batch": b, **{o: c[i] - skip for i, o in enumerate(nb.OPS)},
                    "median_ms": float(g.latency_ms.median())})
    return pd.DataFrame(out)


def lines(test: pd.DataFrame, lab: pd.DataFrame) -> list[str]:
    g = with_ceiling(test, lab)
    if not len(g):
        return []
    g = g[np.isfinite(g.class_ms)]
    spread = within_class_spread(lab)
    out = ["HELP's NAS-Bench-201 rows against the labels' own ceiling (`scripts/training/help_ceiling.py`): a cell's "
           "work is fixed by how many of its six edges carry each op (210 classes for the 15,625 cells), so the mean "
           "latency of its class over the *train* cells orders the held-out cells as well as the labels allow; the "
           "rest is the measurement's noise (the spread of one class's latencies on one device and batch). Kendall's "
           "tau-b within each device and batch, averaged as above; a class's cells tie in the ceiling's ordering.", "",
           "| device | held-out rows | ensemble tau | trees tau | GNN tau | transformer tau | ceiling tau (class mean of the train cells) | labels' spread within a class (median) |",
           "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for dev, d in g.groupby("device_id"):
        taus = [report.fmt_tau(report.mean_tau(d, c)) for c in ("ensemble_ms", "trees_ms", "gnn_ms", "transformer_ms", "class_ms")]
        out.append(f"| {dev} | {len(d)} | " + " | ".join(taus) + f" | {report.fmt_pct(spread.get(dev, np.nan))} |")
    costs = edge_costs(lab)
    one = costs[costs.batch == costs.batch.min()]
    out += ["", f"What one edge costs over a `skip_connect` edge at batch {int(one.batch.iloc[0])}, in the 15 cells "
            "together (least squares over every cell of a device; ms): HELP's networks ran a kernel for `none` (its "
            "cost is the pooling op's, not below `skip_connect`'s), as NAS-Bench-201's code computes every edge.", "",
            "| device | none | avg_pool_3x3 | nor_conv_1x1 | nor_conv_3x3 | median latency |", "|---|---:|---:|---:|---:|---:|"]
    for _, r in one.iterrows():
        out.append(f"| {r.device_id} | {r['none']:+.3f} | {r['avg_pool_3x3']:+.3f} | {r['nor_conv_1x1']:+.3f} | "
                   f"{r['nor_conv_3x3']:+.3f} | {r.median_ms:.2f} |")
    return out + [""]
