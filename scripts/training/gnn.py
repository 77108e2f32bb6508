"""Train the GNN over the operator graph (issue 12): GraphSAGE-style message passing over the core's operator
graph (operator_graph.h), a mean+max readout, and a head that reads the graph embedding beside the whole-model
feature row (device, runtime, precision, batch and the roofline's summary; features.h) and predicts
log(measured / roofline latency), the residual the roofline misses, like the trees.

    /usr/bin/python3 -m scripts.training.gnn [--write] [--storage q8_0|f16|f32] [--epochs N]

Rows and splits are the trees' (scripts/training/rows.py: held-out model families never trained on). The
graphs come from `perfcard eval` queries with "graph": true, so the node features are the core's own.
--write exports weights/gnn.pcwt (metadata, the weights in the chosen storage, and the held-out error the core
measured with the same network stored as f32, f16 and q8_0: scripts/training/quantization.py) and the parity
rows the C++ tests replay (tests/data/gnn_parity.pcwt: graphs, feature rows and this module's float64 forward
pass on the weights as written, so that the test measures the core's arithmetic, not the quantization; --parity-only
rewrites it from the committed file).

Architecture (names are the weights file's tensors; every matrix is [out, in], in padded with zero columns
to a multiple of 32 so any storage can hold it):
  h0 = relu(in.w [emb.op[op] | emb.class[cls] | (x - node.mean) / node.std] + in.b)
  h_{l+1} = h_l + relu(sage{l}.self.w h_l + sage{l}.self.b + sage{l}.pred.w mean_{p -> i} h_l[p]
                       + sage{l}.succ.w mean_{i -> s} h_l[s])
  g = [mean_i h_L | max_i h_L]
  margin = head.w2 relu(head.w1 [g | row] + head.b1) + head.b2, row = (features - row.mean) / row.std, NaN -> 0
"""
from __future__ import annotations

import datetime
import json
import os
import sys

import numpy as np
import pandas as pd

from scripts import paths
from scripts.roofline.perfcard_eval import run_queries
from scripts.training import networks, quantization, rows as trows
from scripts.training.networks import Norm
from scripts.training.trees import git_commit, target, training_domain, weights_of
from scripts.weights import pcwt

OUT = os.path.join(paths.WEIGHTS, "gnn.pcwt")
PARITY = os.path.join(paths.TEST_DATA, "gnn_parity.pcwt")
PREDICTOR_VERSION = 1
HYPER = {"hidden": 64, "op_embedding": 16, "class_embedding": 4, "layers": 3, "head_hidden": 64, "epochs": 40,
         "graphs_per_step": 32, "lr": 2e-3, "weight_decay": 1e-4, "loss": "weighted L1 on the log ratio"}


# ------------------------------------------------------------------------------------------------ data

def graphs_for(df: pd.DataFrame) -> tuple[list[dict], np.ndarray]:
    """One operator graph per model file of the rows, from the core (bound to the dims of the model's first
    row: the node features are per sample, so a model's graph hardly differs between batches); and each
    row's graph index. Training embeds each graph once for all the rows that share it."""
    first = df.drop_duplicates("model")
    index = {m: i for i, m in enumerate(first.model)}
    graphs = [graph_arrays(res["graph"]) for res in run_queries(trows.queries(first, graph=True))]
    return graphs, np.array([index[m] for m in df.model], np.int64)


def graph_arrays(g: dict) -> dict:
    """A `perfcard eval` answer's "graph" as numpy arrays."""
    return {"op": np.array(g["op"], np.int64), "cls": np.array(g["class"], np.int64),
            "x": np.array(g["x"], np.float32).reshape(len(g["op"]), -1),
            "src": np.array(g["src"], np.int64), "dst": np.array(g["dst"], np.int64), "schema_hash": g["schema_hash"]}


# ----------------------------------------------------------------------------------------------- model

def build_model(n_ops: int, n_cls: int, n_node: int, n_row: int, h: dict):
    import torch
    from torch import nn

    H = h["hidden"]

    def seg_mean(v, idx, n):
        s = torch.zeros(n, v.shape[1], dtype=v.dtype).index_add_(0, idx, v)
        c = torch.zeros(n, dtype=v.dtype).index_add_(0, idx, torch.ones(len(idx), dtype=v.dtype))
        return s / c.clamp(min=1).unsqueeze(1)

    class GNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb_op = nn.Embedding(n_ops, h["op_embedding"])
            self.emb_cls = nn.Embedding(n_cls, h["class_embedding"])
            self.inp = nn.Linear(h["op_embedding"] + h["class_embedding"] + n_node, H)
            self.self_ = nn.ModuleList(nn.Linear(H, H) for _ in range(h["layers"]))
            self.pred = nn.ModuleList(nn.Linear(H, H, bias=False) for _ in range(h["layers"]))
            self.succ = nn.ModuleList(nn.Linear(H, H, bias=False) for _ in range(h["layers"]))
            self.head1 = nn.Linear(2 * H + n_row, h["head_hidden"])
            self.head2 = nn.Linear(h["head_hidden"], 1)

        def nodes(self, op, cls, x, src, dst):
            """The node states after message passing (what pretrain.py's auto-encoder decodes)."""
            n = len(op)
            hh = torch.relu(self.inp(torch.cat([self.emb_op(op), self.emb_cls(cls), x], 1)))
            for l in range(len(self.self_)):
                mp = seg_mean(hh[src], dst, n)
                ms = seg_mean(hh[dst], src, n)
                hh = hh + torch.relu(self.self_[l](hh) + self.pred[l](mp) + self.succ[l](ms))
            return hh

        def embed(self, op, cls, x, src, dst, gidx, n_graphs):
            hh = self.nodes(op, cls, x, src, dst)
            mean = seg_mean(hh, gidx, n_graphs)
            mx = torch.zeros(n_graphs, H).scatter_reduce(0, gidx.unsqueeze(1).expand(-1, H), hh, "amax",
                                                          include_self=False)
            return torch.cat([mean, mx], 1)

        def head(self, g, row):
            return self.head2(torch.relu(self.head1(torch.cat([g, row], 1)))).squeeze(1)

    return GNN()


def collate(graphs: list[dict], ids: np.ndarray, node_norm: Norm):
    import torch
    ops, cls, xs, src, dst, gidx = [], [], [], [], [], []
    base = 0
    for k, gi in enumerate(ids):
        g = graphs[gi]
        n = len(g["op"])
        ops.append(g["op"]), cls.append(g["cls"]), xs.append(node_norm(g["x"]))
        src.append(g["src"] + base), dst.append(g["dst"] + base), gidx.append(np.full(n, k))
        base += n
    t = lambda a, dt=torch.long: torch.from_numpy(np.concatenate(a)).to(dt)
    return t(ops), t(cls), t(xs, torch.float32), t(src), t(dst), t(gidx), len(ids)


def fit(df: pd.DataFrame, graphs: list[dict], gid: np.ndarray, n_ops: int, n_cls: int, h: dict = HYPER,
        seed: int = 0, init: dict | None = None):
    """Each step embeds `graphs_per_step` graphs and scores every training row of them; a row's loss weighs
    1/rows of its source, so every source weighs the same (as in the trees). `init`: a pretrained encoder
    (pretrain.py: its parameters and the node normalizer it was trained with) to start from."""
    import torch
    torch.manual_seed(seed)
    torch.set_num_threads(2)
    rng = np.random.default_rng(seed)
    used = np.unique(gid)
    node_norm = init["node_norm"] if init else Norm(np.concatenate([graphs[i]["x"] for i in used]))
    xr = trows.feature_matrix(df)
    row_norm = Norm(xr)
    rows = torch.from_numpy(row_norm(xr))
    y = torch.from_numpy(target(df).astype(np.float32))
    w = torch.from_numpy(weights_of(df).astype(np.float32))
    rows_of = {int(g): np.flatnonzero(gid == g) for g in used}
    model = build_model(n_ops, n_cls, graphs[0]["x"].shape[1], xr.shape[1], h)
    if init:  # the encoder's tensors, every one of them, and nothing else (the head starts fresh)
        res = model.load_state_dict(init["encoder"], strict=False)
        wrong = res.unexpected_keys + [k for k in res.missing_keys if not k.startswith("head")]
        if wrong:
            raise SystemExit(f"the pretrained encoder does not fit this GNN: {sorted(wrong)}")
    opt = torch.optim.AdamW(model.parameters(), lr=h["lr"], weight_decay=h["weight_decay"])
    per = h["graphs_per_step"]
    steps = h["epochs"] * ((len(used) + per - 1) // per)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=h["lr"], total_steps=steps)
    step = 0
    for epoch in range(h["epochs"]):
        order = rng.permutation(used)
        total = 0.0
        for lo in range(0, len(order), per):
            part = order[lo:lo + per]
            g = model.embed(*collate(graphs, part, node_norm))
            take = np.concatenate([rows_of[int(k)] for k in part])
            which = torch.from_numpy(np.concatenate([np.full(len(rows_of[int(k)]), i) for i, k in enumerate(part)]))
            pred = model.head(g[which], rows[take])
            wt = w[take]
            loss = ((pred - y[take]).abs() * wt).sum() / wt.sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            step += 1
            total += loss.item()
        print(f"  epoch {epoch + 1}/{h['epochs']}: mean step loss {total / max(1, (len(order) + per - 1) // per):.4f}",
              flush=True)
    return model, node_norm, row_norm


def fit_predict(train: pd.DataFrame, held: pd.DataFrame, graphs, gid: np.ndarray, n_ops: int, n_cls: int,
                h: dict = HYPER, seed: int = 0, init: dict | None = None) -> np.ndarray:
    """The margins of the rows `held` from a GNN fitted on the rows `train` (both indexed as `gid` is: by
    position in the frame the graphs were made for)."""
    model, node_norm, row_norm = fit(train.reset_index(drop=True), graphs, gid[train.index.to_numpy()], n_ops, n_cls, h,
                                     seed, init)
    model.eval()
    return predict(model, node_norm, row_norm, held, graphs, gid[held.index.to_numpy()])


def predict(model, node_norm: Norm, row_norm: Norm, df: pd.DataFrame, graphs, gid) -> np.ndarray:
    import torch
    out = np.zeros(len(df), np.float32)
    rows = torch.from_numpy(row_norm(trows.feature_matrix(df)))
    with torch.no_grad():
        uniq = np.unique(gid)
        emb = {}
        for lo in range(0, len(uniq), 256):
            part = uniq[lo:lo + 256]
            e = model.embed(*collate(graphs, part, node_norm))
            emb.update({int(g): e[i] for i, g in enumerate(part)})
        g = torch.stack([emb[int(i)] for i in gid])
        out[:] = model.head(g, rows).numpy()
    return out


# ---------------------------------------------------------------------------------------------- export

def weight_tensors(model, node_norm: Norm, row_norm: Norm, storage: str) -> dict:
    """The model's tensors as the weights file holds them; matrices padded to 32 columns, in `storage`."""
    mat = lambda t: networks.stored_matrix(t, storage)
    vec = lambda t: t.detach().numpy().astype(np.float32)
    out = {"emb.op": vec(model.emb_op.weight), "emb.class": vec(model.emb_cls.weight),
           "node.mean": node_norm.mean, "node.std": node_norm.std, "row.mean": row_norm.mean, "row.std": row_norm.std,
           "in.w": mat(model.inp.weight), "in.b": vec(model.inp.bias),
           "head.w1": mat(model.head1.weight), "head.b1": vec(model.head1.bias),
           "head.w2": mat(model.head2.weight), "head.b2": vec(model.head2.bias)}
    for l in range(len(model.self_)):
        out.update({f"sage{l}.self.w": mat(model.self_[l].weight), f"sage{l}.self.b": vec(model.self_[l].bias),
                    f"sage{l}.pred.w": mat(model.pred[l].weight), f"sage{l}.succ.w": mat(model.succ[l].weight)})
    return out


def reference_forward(w: dict, layers: int, g: dict, row: np.ndarray) -> float:
    """The forward pass in numpy, float64, on the weights as stored: what the core must reproduce."""
    f8 = lambda a: np.asarray(a, np.float64)
    x = (f8(g["x"]) - f8(w["node.mean"])) / f8(w["node.std"])
    h0 = np.concatenate([f8(w["emb.op"])[g["op"]], f8(w["emb.class"])[g["cls"]], x], 1)
    lin = lambda a, m, b=None: a @ f8(w[m])[:, :a.shape[1]].T + (0 if b is None else f8(w[b]))
    h = np.maximum(lin(h0, "in.w", "in.b"), 0)
    n = len(h)

    def mean_by(vals, idx):
        s = np.zeros((n, vals.shape[1]))
        np.add.at(s, idx, vals)
        c = np.bincount(idx, minlength=n)
        return s / np.maximum(c, 1)[:, None]

    for l in range(layers):
        mp, ms = mean_by(h[g["src"]], g["dst"]), mean_by(h[g["dst"]], g["src"])
        h = h + np.maximum(lin(h, f"sage{l}.self.w", f"sage{l}.self.b") + lin(mp, f"sage{l}.pred.w")
                           + lin(ms, f"sage{l}.succ.w"), 0)
    r = np.nan_to_num((f8(row) - f8(w["row.mean"])) / f8(w["row.std"]), nan=0.0)
    z = np.concatenate([h.mean(0), h.max(0), r])[None, :]
    z = np.maximum(lin(z, "head.w1", "head.b1"), 0)
    return float(lin(z, "head.w2", "head.b2")[0, 0])


def export(model, node_norm, row_norm, train: pd.DataFrame, accuracy: dict, schema: dict, storage: str,
           provenance: str, help_sample: int, quantized: dict | None = None) -> bytes:
    tensors = weight_tensors(model, node_norm, row_norm, storage)
    domain_meta, domain_tensors = training_domain(train, accuracy)
    tensors.update(domain_tensors)
    meta = {"predictor": "gnn", "predictor.version": PREDICTOR_VERSION, "feature_schema.hash": schema["hash"],
            "graph_schema.hash": schema["graph"]["hash"], "training.provenance": provenance,
            "training.sources": pcwt.Array("string", sorted(train.source.unique())),
            "training.commit": git_commit(), "training.date": datetime.date.today().isoformat(),
            "created_by": "scripts/training/gnn.py", "gnn.layers": HYPER["layers"], "gnn.storage": storage,
            "training.recipe": json.dumps(dict(HYPER, help_sample=help_sample, storage=storage), sort_keys=True)}
    meta.update(domain_meta)
    if quantized is not None:
        meta[quantization.KEY] = json.dumps(quantized, sort_keys=True)
    return pcwt.write_bytes(meta, tensors)


def write_parity(test: pd.DataFrame, graphs, gid, schema: dict, limit: int = 24) -> int:
    """A per-source sample of held-out rows: their graphs (concatenated, with offsets), feature rows and the
    numpy reference margin on the weights as written to weights/gnn.pcwt."""
    # Graphs of at most 600 nodes (the largest zoo graphs have 14k).
    take = networks.parity_sample(test, np.array([len(graphs[g]["op"]) for g in gid[test.index.to_numpy()]]), 600,
                                  limit)
    tgid = gid[take.index.to_numpy()]
    w = networks.stored_weights(OUT)
    rowsx = trows.feature_matrix(take)
    ref = np.array([reference_forward(w, HYPER["layers"], graphs[g], r) for g, r in zip(tgid, rowsx)], np.float32)
    ops, cls, xs, src, dst, nptr, eptr = [], [], [], [], [], [0], [0]
    for g in tgid:
        gr = graphs[g]
        ops.append(gr["op"]), cls.append(gr["cls"]), xs.append(gr["x"]), src.append(gr["src"]), dst.append(gr["dst"])
        nptr.append(nptr[-1] + len(gr["op"])), eptr.append(eptr[-1] + len(gr["src"]))
    pcwt.write(PARITY, networks.parity_metadata("gnn", PREDICTOR_VERSION, schema, "graph", take), {
        "op": np.concatenate(ops).astype(np.int32), "class": np.concatenate(cls).astype(np.int32),
        "x": np.concatenate(xs).astype(np.float32), "src": np.concatenate(src).astype(np.int32),
        "dst": np.concatenate(dst).astype(np.int32), "node_ptr": np.array(nptr, np.int32),
        "edge_ptr": np.array(eptr, np.int32), "row": rowsx.astype(np.float32), "margin": ref})
    return len(take)


# ---------------------------------------------------------------------------------------------- main

def main(argv=None) -> int:
    args = networks.arguments(__doc__, "gnn", HYPER, argv)
    schema, n_ops, n_cls, df = networks.rows(args.help_sample)
    graphs, gid = graphs_for(df)
    if {g["schema_hash"] for g in graphs} != {schema["graph"]["hash"]}:
        raise SystemExit("the CLI's graphs are not of the schema it reports: rebuild")
    train_mask, test_mask = (df.split == "train").to_numpy(), (df.split == "test").to_numpy()
    if args.parity_only:
        print(f"wrote {PARITY} ({write_parity(df[test_mask], graphs, gid, schema)} rows)")
        return 0
    train, test = df[train_mask], df[test_mask].copy()
    print(f"{len(df)} rows ({len(train)} train, {len(test)} held-out), {len(graphs)} graphs")
    model, node_norm, row_norm = fit(train.reset_index(drop=True), graphs, gid[train_mask], n_ops, n_cls)
    model.eval()
    margin = predict(model, node_norm, row_norm, test, graphs, gid[test_mask])
    accuracy = networks.held_out(test, train, margin, "gnn")
    if args.write:
        prov = networks.provenance("GraphSAGE-style GNN", HYPER, train, args.help_sample)
        data = networks.write(lambda storage, q: export(model, node_norm, row_norm, train, accuracy, schema, storage,
                                                        prov, args.help_sample, q), "gnn", OUT, args.storage, test)
        n = write_parity(df[test_mask], graphs, gid, schema)
        print(f"wrote {OUT} ({len(data)} bytes, {args.storage}) and {PARITY} ({n} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
