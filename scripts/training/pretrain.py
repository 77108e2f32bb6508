"""Pretrain the GNN's graph encoder without labels (issue 12), then measure what it is worth: the GNN fine-tuned
on the measured rows from the pretrained encoder and from scratch, over several seeds, scored on the same
held-out families.

    /usr/bin/python3 -m scripts.training.pretrain [--seeds 0,1,2] [--minutes 20] [--write]

The unlabelled graphs are every zoo graph on disk (scripts/zoo: torchvision models and variants, transformers,
NAS-Bench-201 cells; `scripts.zoo.all` writes them), one per structure, except those of a held-out family:
the evaluation's models stay unseen, as a user's model is. The core gives their operator graphs (`perfcard
eval` with "graph": true), the same node features the GNN reads.

The objective is a graph auto-encoder's (Kipf & Welling's, as TraPPM pretrained its encoder), on the node
states h of gnn.py's encoder, unchanged:
  - masked nodes: a fifth of the nodes have their op type and features hidden (op -> 0, the unknown op;
    features -> 0, the normalized mean); linear decoders predict the op type (cross-entropy) and the
    features (squared error) from h, so a node's state must carry what its neighbourhood implies;
  - edges: a bilinear decoder, sigmoid(h_src^T W h_dst), tells the graph's edges from as many random pairs of
    nodes of the same graph (binary cross-entropy); W is not symmetric, so direction counts.
Fine-tuning starts the GNN's encoder (embeddings, input layer, message passing) from the pretrained one and
uses its node normalizer; the head starts fresh; the recipe is otherwise gnn.py's committed one.

--write puts the comparison in docs/accuracy.md (between the pretraining markers). The pretrained encoder is
kept in .cache/training/ (not shipped: the shipped GNN is gnn.py's).
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import os
import pickle
import sys
import time

import numpy as np
import pandas as pd

from scripts import paths
from scripts.data.zoo_index import ZooIndex
from scripts.roofline.perfcard_eval import run_queries
from scripts.roofline.whole_models import family_split
from scripts.training import gnn, networks, report, rows as trows
from scripts.training.networks import Norm
from scripts.training.trees import git_commit, target
from scripts.zoo import manifest as zm

CACHE = os.path.join(paths.ROOT, ".cache", "training")
MASK_RATE = 0.2
# Any catalog device: the operator graph's node features do not depend on it.
GRAPH_DEVICE = "h100-sxm5-80gb"
BEGIN, END = "<!-- pretraining:begin -->", "<!-- pretraining:end -->"


# ------------------------------------------------------------------------------------------------ graphs

def family_names(entry: dict) -> list[str]:
    """The family names the training rows may give this graph (a NAS-Bench-201 cell is its own family in
    HELP's rows, and "nasbench201" in ours)."""
    names = [entry.get("family") or entry["id"]]
    if entry.get("generator") == "nasbench201":
        names.append(f"nasbench201:{int(entry['config']['arch_index'])}")
    return names


def unlabelled(df: pd.DataFrame, max_nodes: int, graph_hash: str) -> tuple[list[dict], dict]:
    """The pretraining graphs (numpy arrays, as gnn.graph_arrays), and counts of what was left out and why.
    `graph_hash`: the core's graph schema, which the graphs (and their cache) must be of."""
    test = df[df.split == "test"]
    held_families, held_files = set(test.family), {os.path.realpath(m) for m in test.model}
    counts = {"on_disk": 0, "held_out_family": 0, "same_structure": 0, "larger": 0}
    picked, structures, keys = [], set(), [graph_hash]
    for e in ZooIndex().all:
        path = os.path.join(zm.OUT_DIR, e["file"])
        if not os.path.exists(path):
            continue
        counts["on_disk"] += 1
        names = family_names(e)
        if (os.path.realpath(path) in held_files or any(n in held_families or family_split(n) == "test"
                                                        for n in names)):
            counts["held_out_family"] += 1
            continue
        if e.get("structure_hash") in structures:
            counts["same_structure"] += 1
            continue
        structures.add(e.get("structure_hash"))
        keys.append(f"{e['file']} {e.get('structure_hash')}")
        picked.append({"model": path, "dims": e["bind"], "device": GRAPH_DEVICE, "precision": "fp32",
                       "runtime": "pytorch-eager", "threads": 0, "graph": True})
    key = hashlib.sha256("\n".join(keys).encode()).hexdigest()[:16]
    cache = os.path.join(CACHE, f"pretrain-graphs-{key}.pkl")
    if os.path.exists(cache):
        with open(cache, "rb") as f:
            graphs = pickle.load(f)
    else:
        graphs = []
        for lo in range(0, len(picked), 500):  # the answers are large: a chunk at a time
            graphs += [gnn.graph_arrays(r["graph"]) for r in run_queries(picked[lo:lo + 500])]
            print(f"  operator graphs: {len(graphs)}/{len(picked)}", flush=True)
        os.makedirs(CACHE, exist_ok=True)
        with open(cache, "wb") as f:
            pickle.dump(graphs, f)
    if {g["schema_hash"] for g in graphs} - {graph_hash}:
        raise SystemExit("the CLI's graphs are not of the schema it reports: rebuild")
    kept = [g for g in graphs if 0 < len(g["op"]) <= max_nodes]
    counts["larger"] = len(graphs) - len(kept)
    return kept, counts


# ------------------------------------------------------------------------------------------- pretraining

def pretrain(graphs: list[dict], n_ops: int, n_cls: int, n_row: int, h: dict, minutes: float, seed: int = 0,
             max_epochs: int | None = None):
    """The encoder's parameters and node normalizer after `minutes` of the auto-encoder's objective (or
    `max_epochs` epochs, whichever ends first), and the loss history per epoch."""
    import torch
    from torch import nn
    import torch.nn.functional as F
    torch.manual_seed(seed)
    torch.set_num_threads(2)
    rng = np.random.default_rng(seed)
    node_norm = Norm(np.concatenate([g["x"] for g in graphs]))
    model = gnn.build_model(n_ops, n_cls, graphs[0]["x"].shape[1], n_row, h)
    H = h["hidden"]
    op_dec, x_dec = nn.Linear(H, n_ops), nn.Linear(H, graphs[0]["x"].shape[1])
    edge_w = nn.Linear(H, H, bias=False)
    params = [p for m in (model, op_dec, x_dec, edge_w) for p in m.parameters()]
    opt = torch.optim.AdamW(params, lr=h["lr"], weight_decay=h["weight_decay"])
    per = h["graphs_per_step"]
    ids = np.arange(len(graphs))
    history, start, epoch = [], time.time(), 0
    while time.time() - start < minutes * 60 and (max_epochs is None or epoch < max_epochs):
        order = rng.permutation(ids)
        parts, steps, whole = np.zeros(3), 0, True
        for lo in range(0, len(order), per):
            op, cls, x, src, dst, gidx, n_graphs = gnn.collate(graphs, order[lo:lo + per], node_norm)
            n = len(op)
            mask = torch.rand(n) < MASK_RATE
            mask[torch.randint(n, (1,))] = True  # never an empty mask (its loss would be NaN)
            hh = model.nodes(op.masked_fill(mask, 0), cls, x.masked_fill(mask.unsqueeze(1), 0.0), src, dst)
            l_op = F.cross_entropy(op_dec(hh[mask]), op[mask])
            l_x = F.mse_loss(x_dec(hh[mask]), x[mask])
            # Negatives: for each edge, a random pair of nodes of its graph.
            first = torch.zeros(n_graphs + 1, dtype=torch.long)
            first[1:] = torch.bincount(gidx, minlength=n_graphs).cumsum(0)
            g_of = gidx[src]
            size = (first[g_of + 1] - first[g_of]).float()
            neg_s = first[g_of] + (torch.rand(len(src)) * size).long()
            neg_d = first[g_of] + (torch.rand(len(src)) * size).long()
            pos = (edge_w(hh[src]) * hh[dst]).sum(1)
            neg = (edge_w(hh[neg_s]) * hh[neg_d]).sum(1)
            l_e = (F.binary_cross_entropy_with_logits(pos, torch.ones_like(pos))
                   + F.binary_cross_entropy_with_logits(neg, torch.zeros_like(neg))) if len(src) else pos.sum()
            loss = l_op + l_x + l_e
            opt.zero_grad()
            loss.backward()
            opt.step()
            parts += [l_op.item(), l_x.item(), l_e.item()]
            steps += 1
            if time.time() - start > minutes * 60:
                whole = lo + per >= len(order)
                break
        epoch += 1
        op_ce, x_mse, edge_bce = parts / steps  # means over the steps taken
        history.append({"epoch": epoch, "whole": whole, "op_ce": op_ce, "x_mse": x_mse, "edge_bce": edge_bce})
        print(f"  pretraining epoch {epoch}{'' if whole else ' (cut short)'}: op {op_ce:.3f}, features {x_mse:.3f}, "
              f"edges {edge_bce:.3f} ({time.time() - start:.0f} s)", flush=True)
    encoder = {k: v.detach().clone() for k, v in model.state_dict().items() if not k.startswith("head")}
    return {"encoder": encoder, "node_norm": node_norm}, history


# -------------------------------------------------------------------------------------------- comparison

def scores(test: pd.DataFrame, col: str) -> dict:
    """Per source: MAPE and Kendall's tau (mean over the source's device/batch groups, as report.mean_tau)."""
    out = {}
    for src, g in test.groupby("source"):
        out[src] = {"rows": len(g), "mape": float(report.ape(g[col], g.latency_ms).mean()),
                    "tau": report.mean_tau(g, col)}
    return out


def document(results: dict, counts: dict, n_graphs: int, history: list, minutes: float, seeds: list[int],
             epochs: int) -> str:
    sources = sorted(next(iter(results.values()))[seeds[0]])
    last = next((e for e in reversed(history) if e["whole"]), history[-1])
    lines = [f"Generated by `/usr/bin/python3 -m scripts.training.pretrain --write` ({datetime.date.today().isoformat()}, "
             f"commit {git_commit()[:12]}; the objective is in that file's docstring). Pretraining: {n_graphs} zoo graphs, "
             f"one per structure ({counts['on_disk']} on disk; {counts['held_out_family']} of a held-out family and "
             f"{counts['same_structure']} repeated structures left out, {counts['larger']} larger than the node cap), "
             f"{len(history)} epochs{' (the last one cut short)' if not history[-1]['whole'] else ''} in {minutes:g} "
             f"minutes; {'last whole epoch' if last['whole'] else 'its one epoch, cut short'} ({last['epoch']}): op cross-entropy {last['op_ce']:.3f} "
             f"(first {history[0]['op_ce']:.3f}), features {last['x_mse']:.3f} ({history[0]['x_mse']:.3f}), "
             f"edges {last['edge_bce']:.3f} ({history[0]['edge_bce']:.3f}). Then the GNN fine-tuned with "
             f"gnn.py's committed recipe ({epochs} epochs) from the pretrained encoder, and from scratch, once per seed ({', '.join(map(str, seeds))}); "
             "the same held-out families for both.", "",
             "| source | rows | " + " | ".join(f"{w} MAPE" for w in results) + " | " +
             " | ".join(f"{w} tau" for w in results) + " |", "|---|---:|" + "---:|" * (2 * len(results))]

    def cell(w, src, key, fmt):
        vals = [results[w][s][src][key] for s in seeds if results[w][s][src][key] is not None]
        if not vals:
            return "n/a"
        return fmt(np.mean(vals)) + (f" ± {fmt(np.std(vals))}" if len(vals) > 1 else "")

    for src in sources:
        rows = results[next(iter(results))][seeds[0]][src]["rows"]
        lines.append(f"| {src} | {rows} | " +
                     " | ".join(cell(w, src, "mape", report.fmt_pct) for w in results) + " | " +
                     " | ".join(cell(w, src, "tau", report.fmt_tau) for w in results) + " |")
    lines += ["", "Mean ± standard deviation over the seeds (the seed sets the initialisation and the order of the "
              "graphs in both arms; pretraining itself ran once)."]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--minutes", type=float, default=20, help="pretraining time (whole epochs are not waited for)")
    ap.add_argument("--max-nodes", type=int, default=3000, help="leave larger graphs out of pretraining (time)")
    ap.add_argument("--epochs", type=int, help="fine-tuning epochs (default: the committed recipe's)")
    ap.add_argument("--write", action="store_true", help="put the comparison in docs/accuracy.md")
    args = ap.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    h = networks.recipe(gnn)
    if args.epochs:
        h["epochs"] = args.epochs
    schema, n_ops, n_cls, df = networks.rows(int(networks.committed_recipe(gnn.OUT)["help_sample"]))
    graphs, gid = gnn.graphs_for(df)
    train, test = df[df.split == "train"], df[df.split == "test"].copy()
    zoo, counts = unlabelled(df, args.max_nodes, schema["graph"]["hash"])
    print(f"{len(zoo)} unlabelled graphs for pretraining ({counts}); {len(train)} train rows, {len(test)} held-out",
          flush=True)
    init, history = pretrain(zoo, n_ops, n_cls, trows.feature_matrix(df).shape[1], h, args.minutes)
    os.makedirs(CACHE, exist_ok=True)
    import torch
    torch.save(init, os.path.join(CACHE, "gnn-encoder-pretrained.pt"))
    lo, hi = target(train).min(), target(train).max()
    results = {"from scratch": {}, "pretrained": {}}
    for seed in seeds:
        for arm, start in (("from scratch", None), ("pretrained", init)):
            margin = gnn.fit_predict(train, test, graphs, gid, n_ops, n_cls, h, seed, start)
            test["_ms"] = test.roofline_ms * np.exp(np.clip(margin, lo, hi))
            results[arm][seed] = scores(test, "_ms")
            print(f"seed {seed}, {arm}: " + ", ".join(f"{s} {v['mape']:.1%} tau {report.fmt_tau(v['tau'])}"
                                                      for s, v in results[arm][seed].items()), flush=True)
    text = document(results, counts, len(zoo), history, args.minutes, seeds, h["epochs"])
    print(text)
    report.replace_section(f"{BEGIN}\n{text}\n{END}", BEGIN, END, "Pretraining the GNN's encoder without labels",
                           args.write, False, "pretraining")
    return 0


if __name__ == "__main__":
    sys.exit(main())
