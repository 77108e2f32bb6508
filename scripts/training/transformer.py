"""Train the transformer over the kernel sequence (issue 12; in the spirit of TLP and CDMPP): the kernels the
runtime runs, in execution order after its fusion, each a vector of device-independent features from the core
(kernel_sequence.h); a small pre-LayerNorm transformer encodes them, a mean+max pool summarizes them, and a
head reads that beside the whole-model feature row (device, runtime, precision, batch and the roofline's
summary; features.h) and predicts log(measured / roofline latency), like the trees and the GNN.

    /usr/bin/python3 -m scripts.training.transformer [--write] [--storage q8_0|f16|f32] [--epochs N]

Rows and splits are the trees' (scripts/training/rows.py: held-out model families never trained on). The
sequences come from `perfcard eval` queries with "sequence": true, one per (model, dims, runtime,
precision) of the rows. --write exports weights/transformer.pcwt (metadata, weights in the chosen storage,
and the held-out error the core measured with the same network stored as f32, f16 and q8_0) and the
parity rows the C++ tests replay (tests/data/transformer_parity.pcwt: sequences, feature rows and this
module's float64 forward pass on the weights as written; --parity-only rewrites it from the committed file).

Long sequences: attention is within windows of `window` consecutive kernels (block-diagonal), so cost grows
linearly; the encoding is pooled over all kernels. A window's output depends only on its own kernels, so
equal windows (the repeated blocks of a decoder, the cells of a NAS network) are encoded once, here over the
whole training set and in the core per model; the result is exact.

Architecture (names are the weights file's tensors; every matrix is [out, in], in padded with zero columns
to a multiple of 32 so any storage can hold it; t = a window's kernels, j its position in the window):
  h = in.w [emb.op[op] | emb.class[cls] | (x - kernel.mean) / kernel.std] + in.b + pos[j]
  per block l:  h = h + attn(LN(h; ln1)),  attn = multi-head self-attention (attn.{q,k,v,o}.{w,b}) in the window
                h = h + ff2.w gelu_tanh(ff1.w LN(h; ln2) + ff1.b) + ff2.b
  y = LN(h; out.ln);  g = [mean over kernels of y | max over kernels of y]  (zeros for no kernels)
  margin = head.w2 relu(head.w1 [g | row] + head.b1) + head.b2, row = (features - row.mean) / row.std, NaN -> 0
"""
from __future__ import annotations

import datetime
import json
import math
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

OUT = os.path.join(paths.WEIGHTS, "transformer.pcwt")
PARITY = os.path.join(paths.TEST_DATA, "transformer_parity.pcwt")
PREDICTOR_VERSION = 1
HYPER = {"width": 32, "heads": 2, "layers": 2, "ff": 64, "window": 32, "op_embedding": 8, "class_embedding": 4,
         "head_hidden": 64, "epochs": 30, "sequences_per_step": 32, "lr": 2e-3, "weight_decay": 1e-4,
         "loss": "weighted L1 on the log ratio"}


# ------------------------------------------------------------------------------------------------ data

def sequence_key(df: pd.DataFrame) -> pd.Series:
    return df.model + "|" + df.dims + "|" + df.runtime + "|" + df.precision


def sequences_for(df: pd.DataFrame) -> tuple[list[dict], np.ndarray]:
    """One kernel sequence per (model, dims, runtime, precision) of the rows, from the core; and each row's
    sequence index."""
    keys = sequence_key(df)
    first = df[~keys.duplicated()]
    index = {k: i for i, k in enumerate(keys[first.index])}
    seqs = []
    for res in run_queries(trows.queries(first, sequence=True)):
        s = res["sequence"]
        n = len(s["op"])
        seqs.append({"op": np.array(s["op"], np.int64), "cls": np.array(s["class"], np.int64),
                     "x": np.array(s["x"], np.float32).reshape(n, s["features"]), "schema_hash": s["schema_hash"]})
    return seqs, np.array([index[k] for k in keys], np.int64)


class Windows:
    """Every distinct window of the sequences, padded to `window` kernels, and per sequence the windows
    it is made of (with repeats) and its kernel count."""

    def __init__(self, seqs: list[dict], window: int, features: int):
        keys, ops, clss, xs, lens = {}, [], [], [], []
        self.of_seq = []
        for s in seqs:
            ids = []
            for lo in range(0, len(s["op"]), window):
                op, cl, x = s["op"][lo:lo + window], s["cls"][lo:lo + window], s["x"][lo:lo + window]
                key = op.tobytes() + cl.tobytes() + x.tobytes()
                if key not in keys:
                    keys[key] = len(lens)
                    t = len(op)
                    ops.append(np.pad(op, (0, window - t))), clss.append(np.pad(cl, (0, window - t)))
                    xs.append(np.pad(x, ((0, window - t), (0, 0)))), lens.append(t)
                ids.append(keys[key])
            self.of_seq.append(np.array(ids, np.int64))
        self.op = np.stack(ops) if ops else np.zeros((0, window), np.int64)
        self.cls = np.stack(clss) if clss else np.zeros((0, window), np.int64)
        self.x = np.stack(xs) if xs else np.zeros((0, window, features), np.float32)
        self.len = np.array(lens, np.int64)
        self.kernels = np.array([len(s["op"]) for s in seqs], np.int64)


# ----------------------------------------------------------------------------------------------- model

def build_model(n_ops: int, n_cls: int, n_kernel: int, n_row: int, h: dict):
    import torch
    from torch import nn

    D, W, heads = h["width"], h["window"], h["heads"]

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
            self.q, self.k, self.v, self.o = (nn.Linear(D, D) for _ in range(4))
            self.ff1, self.ff2 = nn.Linear(D, h["ff"]), nn.Linear(h["ff"], D)

        def forward(self, x, valid):
            u, t, _ = x.shape
            a = self.ln1(x)
            split = lambda z: z.view(u, t, heads, D // heads).transpose(1, 2)
            s = split(self.q(a)) @ split(self.k(a)).transpose(-1, -2) / math.sqrt(D // heads)
            s = s.masked_fill(~valid[:, None, None, :], float("-inf"))
            o = (torch.softmax(s, -1) @ split(self.v(a))).transpose(1, 2).reshape(u, t, D)
            x = x + self.o(o)
            return x + self.ff2(nn.functional.gelu(self.ff1(self.ln2(x)), approximate="tanh"))

    class SequenceModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb_op = nn.Embedding(n_ops, h["op_embedding"])
            self.emb_cls = nn.Embedding(n_cls, h["class_embedding"])
            self.inp = nn.Linear(h["op_embedding"] + h["class_embedding"] + n_kernel, D)
            self.pos = nn.Parameter(torch.randn(W, D) * 0.02)
            self.blocks = nn.ModuleList(Block() for _ in range(h["layers"]))
            self.ln_out = nn.LayerNorm(D)
            self.head1 = nn.Linear(2 * D + n_row, h["head_hidden"])
            self.head2 = nn.Linear(h["head_hidden"], 1)

        def windows(self, op, cls, x, lens):
            """Per window [u, D]: the sum and the max of the last states over its kernels."""
            valid = torch.arange(W)[None, :] < lens[:, None]
            hh = self.inp(torch.cat([self.emb_op(op), self.emb_cls(cls), x], 2)) + self.pos
            for b in self.blocks:
                hh = b(hh, valid)
            y = self.ln_out(hh)
            return (y * valid[..., None]).sum(1), y.masked_fill(~valid[..., None], float("-inf")).amax(1)

        def pool(self, sums, maxs, seq_windows, seq_ids, n_seqs, kernels):
            """Per sequence [n, 2D]: windows' sums over its kernels / kernel count, and their max."""
            total = torch.zeros(n_seqs, D).index_add_(0, seq_ids, sums[seq_windows])
            mx = torch.full((n_seqs, D), float("-inf")).scatter_reduce(
                0, seq_ids[:, None].expand(-1, D), maxs[seq_windows], "amax", include_self=True)
            return torch.cat([total / kernels.clamp(min=1)[:, None], mx], 1)

        def head(self, g, row):
            return self.head2(torch.relu(self.head1(torch.cat([g, row], 1)))).squeeze(1)

    return SequenceModel()


def embed(model, win: Windows, kernel_norm: Norm, seq_ids: np.ndarray):
    """The pooled encodings [len(seq_ids), 2D] of these sequences, each distinct window encoded once."""
    import torch
    parts = [win.of_seq[s] for s in seq_ids]
    need = np.unique(np.concatenate(parts)) if parts else np.zeros(0, np.int64)
    local = {int(w): i for i, w in enumerate(need)}
    x = kernel_norm(win.x[need].reshape(-1, win.x.shape[2])).reshape(len(need), win.x.shape[1], -1)
    x = x * (np.arange(win.x.shape[1])[None, :] < win.len[need][:, None])[..., None]  # padding stays 0
    sums, maxs = model.windows(torch.from_numpy(win.op[need]), torch.from_numpy(win.cls[need]),
                               torch.from_numpy(x.astype(np.float32)), torch.from_numpy(win.len[need]))
    seq_windows = torch.from_numpy(np.array([local[int(w)] for p in parts for w in p], np.int64))
    seq_idx = torch.from_numpy(np.concatenate([np.full(len(p), i) for i, p in enumerate(parts)]).astype(np.int64))
    g = model.pool(sums, maxs, seq_windows, seq_idx, len(parts),
                   torch.from_numpy(win.kernels[seq_ids].astype(np.float32)))
    empty = torch.from_numpy(win.kernels[seq_ids] == 0)
    return torch.where(empty[:, None], torch.zeros_like(g), g)


def fit(df: pd.DataFrame, win: Windows, sid: np.ndarray, n_ops: int, n_cls: int, h: dict = HYPER, seed: int = 0):
    """Each step encodes `sequences_per_step` sequences and scores every training row of them; a row's
    loss weighs 1/rows of its source (every source weighs the same, as in the trees and the GNN)."""
    import torch
    torch.manual_seed(seed)
    torch.set_num_threads(2)
    rng = np.random.default_rng(seed)
    used = np.unique(sid)
    kernel_norm = Norm(np.concatenate([win.x[w, :win.len[w]] for w in np.unique(np.concatenate(
        [win.of_seq[s] for s in used]))]))
    xr = trows.feature_matrix(df)
    row_norm = Norm(xr)
    rows = torch.from_numpy(row_norm(xr))
    y = torch.from_numpy(target(df).astype(np.float32))
    w = torch.from_numpy(weights_of(df).astype(np.float32))
    rows_of = {int(s): np.flatnonzero(sid == s) for s in used}
    model = build_model(n_ops, n_cls, win.x.shape[2], xr.shape[1], h)
    opt = torch.optim.AdamW(model.parameters(), lr=h["lr"], weight_decay=h["weight_decay"])
    per = h["sequences_per_step"]
    steps_per_epoch = (len(used) + per - 1) // per
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=h["lr"], total_steps=h["epochs"] * steps_per_epoch)
    for epoch in range(h["epochs"]):
        order = rng.permutation(used)
        total = 0.0
        for lo in range(0, len(order), per):
            part = order[lo:lo + per]
            g = embed(model, win, kernel_norm, part)
            take = np.concatenate([rows_of[int(k)] for k in part])
            which = torch.from_numpy(np.concatenate([np.full(len(rows_of[int(k)]), i) for i, k in enumerate(part)]))
            pred = model.head(g[which], rows[take])
            wt = w[take]
            loss = ((pred - y[take]).abs() * wt).sum() / wt.sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item()
        print(f"  epoch {epoch + 1}/{h['epochs']}: mean step loss {total / steps_per_epoch:.4f}", flush=True)
    return model, kernel_norm, row_norm


def fit_predict(train: pd.DataFrame, held: pd.DataFrame, win: Windows, sid: np.ndarray, n_ops: int, n_cls: int,
                h: dict = HYPER) -> np.ndarray:
    """The margins of the rows `held` from a transformer fitted on the rows `train` (both indexed as `sid` is:
    by position in the frame the sequences were made for)."""
    model, kernel_norm, row_norm = fit(train.reset_index(drop=True), win, sid[train.index.to_numpy()], n_ops, n_cls, h)
    model.eval()
    return predict(model, kernel_norm, row_norm, held, win, sid[held.index.to_numpy()])


def predict(model, kernel_norm: Norm, row_norm: Norm, df: pd.DataFrame, win: Windows, sid: np.ndarray) -> np.ndarray:
    import torch
    rows = torch.from_numpy(row_norm(trows.feature_matrix(df)))
    uniq = np.unique(sid)
    with torch.no_grad():
        emb = {}
        for lo in range(0, len(uniq), 64):
            part = uniq[lo:lo + 64]
            e = embed(model, win, kernel_norm, part)
            emb.update({int(s): e[i] for i, s in enumerate(part)})
        g = torch.stack([emb[int(s)] for s in sid])
        return model.head(g, rows).numpy()


# ---------------------------------------------------------------------------------------------- export

def weight_tensors(model, kernel_norm: Norm, row_norm: Norm, storage: str) -> dict:
    mat = lambda t: networks.stored_matrix(t, storage)
    vec = lambda t: t.detach().numpy().astype(np.float32)
    out = {"emb.op": vec(model.emb_op.weight), "emb.class": vec(model.emb_cls.weight),
           "kernel.mean": kernel_norm.mean, "kernel.std": kernel_norm.std, "row.mean": row_norm.mean,
           "row.std": row_norm.std, "in.w": mat(model.inp.weight), "in.b": vec(model.inp.bias), "pos": vec(model.pos),
           "out.ln.g": vec(model.ln_out.weight), "out.ln.b": vec(model.ln_out.bias),
           "head.w1": mat(model.head1.weight), "head.b1": vec(model.head1.bias),
           "head.w2": mat(model.head2.weight), "head.b2": vec(model.head2.bias)}
    for l, b in enumerate(model.blocks):
        p = f"block{l}."
        out.update({p + "ln1.g": vec(b.ln1.weight), p + "ln1.b": vec(b.ln1.bias), p + "ln2.g": vec(b.ln2.weight),
                    p + "ln2.b": vec(b.ln2.bias), p + "ff1.w": mat(b.ff1.weight), p + "ff1.b": vec(b.ff1.bias),
                    p + "ff2.w": mat(b.ff2.weight), p + "ff2.b": vec(b.ff2.bias)})
        for name, lin in (("q", b.q), ("k", b.k), ("v", b.v), ("o", b.o)):
            out[p + f"attn.{name}.w"] = mat(lin.weight)
            out[p + f"attn.{name}.b"] = vec(lin.bias)
    return out


def reference_forward(w: dict, h: dict, s: dict, row: np.ndarray) -> float:
    """The forward pass in numpy, float64, on the weights as stored: what the core must reproduce."""
    f8 = lambda a: np.asarray(a, np.float64)
    D, W, heads = h["width"], h["window"], h["heads"]
    lin = lambda a, m, b=None: a @ f8(w[m])[:, :a.shape[1]].T + (0 if b is None else f8(w[b]))

    def ln(a, p):
        mu = a.mean(1, keepdims=True)
        var = ((a - mu) ** 2).mean(1, keepdims=True)
        return (a - mu) / np.sqrt(var + 1e-5) * f8(w[p + ".g"]) + f8(w[p + ".b"])

    def gelu(a):
        return 0.5 * a * (1 + np.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a ** 3)))

    n = len(s["op"])
    if n == 0:
        g = np.zeros(2 * D)
    else:
        total, mx = np.zeros(D), np.full(D, -np.inf)
        for lo in range(0, n, W):
            op, cl = s["op"][lo:lo + W], s["cls"][lo:lo + W]
            x = (f8(s["x"][lo:lo + W]) - f8(w["kernel.mean"])) / f8(w["kernel.std"])
            t = len(op)
            hh = lin(np.concatenate([f8(w["emb.op"])[op], f8(w["emb.class"])[cl], x], 1), "in.w", "in.b")
            hh = hh + f8(w["pos"])[:t]
            for l in range(h["layers"]):
                p = f"block{l}."
                a = ln(hh, p + "ln1")
                q, k, v = (lin(a, p + f"attn.{c}.w", p + f"attn.{c}.b") for c in "qkv")
                dh = D // heads
                o = np.zeros((t, D))
                for hd in range(heads):
                    c = slice(hd * dh, (hd + 1) * dh)
                    sc = q[:, c] @ k[:, c].T / math.sqrt(dh)
                    e = np.exp(sc - sc.max(1, keepdims=True))
                    o[:, c] = (e / e.sum(1, keepdims=True)) @ v[:, c]
                hh = hh + lin(o, p + "attn.o.w", p + "attn.o.b")
                hh = hh + lin(gelu(lin(ln(hh, p + "ln2"), p + "ff1.w", p + "ff1.b")), p + "ff2.w", p + "ff2.b")
            y = ln(hh, "out.ln")
            total += y.sum(0)
            mx = np.maximum(mx, y.max(0))
        g = np.concatenate([total / n, mx])
    r = np.nan_to_num((f8(row) - f8(w["row.mean"])) / f8(w["row.std"]), nan=0.0)
    z = np.maximum(lin(np.concatenate([g, r])[None, :], "head.w1", "head.b1"), 0)
    return float(lin(z, "head.w2", "head.b2")[0, 0])


def metadata(train: pd.DataFrame, schema: dict, storage: str, provenance: str, help_sample: int) -> dict:
    return {"predictor": "transformer", "predictor.version": PREDICTOR_VERSION, "feature_schema.hash": schema["hash"],
            "sequence_schema.hash": schema["sequence"]["hash"], "training.provenance": provenance,
            "training.sources": pcwt.Array("string", sorted(train.source.unique())),
            "training.commit": git_commit(), "training.date": datetime.date.today().isoformat(),
            "created_by": "scripts/training/transformer.py", "transformer.layers": HYPER["layers"],
            "transformer.heads": HYPER["heads"], "transformer.window": HYPER["window"], "transformer.storage": storage,
            "training.recipe": json.dumps(dict(HYPER, help_sample=help_sample, storage=storage), sort_keys=True)}


def file_bytes(model, kernel_norm, row_norm, train, accuracy, schema, storage, provenance, help_sample,
               quantized=None) -> bytes:
    tensors = weight_tensors(model, kernel_norm, row_norm, storage)
    domain_meta, domain_tensors = training_domain(train, accuracy)
    tensors.update(domain_tensors)
    meta = metadata(train, schema, storage, provenance, help_sample)
    meta.update(domain_meta)
    if quantized is not None:
        meta[quantization.KEY] = json.dumps(quantized, sort_keys=True)
    return pcwt.write_bytes(meta, tensors)


def write_parity(test: pd.DataFrame, seqs, sid, schema: dict, limit: int = 24) -> int:
    """A per-source sample of held-out rows: their sequences (concatenated, with offsets), feature rows and
    the numpy reference margin on the weights as written to weights/transformer.pcwt."""
    take = networks.parity_sample(test, np.array([len(seqs[s]["op"]) for s in sid[test.index.to_numpy()]]), 300, limit)
    tsid = sid[take.index.to_numpy()]
    w = networks.stored_weights(OUT)
    rowsx = trows.feature_matrix(take)
    ref = np.array([reference_forward(w, HYPER, seqs[s], r) for s, r in zip(tsid, rowsx)], np.float32)
    ptr = [0]
    for s in tsid:
        ptr.append(ptr[-1] + len(seqs[s]["op"]))
    pcwt.write(PARITY, networks.parity_metadata("transformer", PREDICTOR_VERSION, schema, "sequence", take), {
        "op": np.concatenate([seqs[s]["op"] for s in tsid]).astype(np.int32),
        "class": np.concatenate([seqs[s]["cls"] for s in tsid]).astype(np.int32),
        "x": np.concatenate([seqs[s]["x"] for s in tsid]).astype(np.float32),
        "kernel_ptr": np.array(ptr, np.int32), "row": rowsx.astype(np.float32), "margin": ref})
    return len(take)


# ---------------------------------------------------------------------------------------------- main

def main(argv=None) -> int:
    args = networks.arguments(__doc__, "transformer", HYPER, argv)
    schema, n_ops, n_cls, df = networks.rows(args.help_sample)
    seqs, sid = sequences_for(df)
    if {s["schema_hash"] for s in seqs} != {schema["sequence"]["hash"]}:
        raise SystemExit("the CLI's sequences are not of the schema it reports: rebuild")
    train_mask, test_mask = (df.split == "train").to_numpy(), (df.split == "test").to_numpy()
    if args.parity_only:
        print(f"wrote {PARITY} ({write_parity(df[test_mask], seqs, sid, schema)} rows)")
        return 0
    win = Windows(seqs, HYPER["window"], len(schema["sequence"]["kernel_features"]))
    print(f"{len(df)} rows ({train_mask.sum()} train, {test_mask.sum()} held-out), {len(seqs)} sequences, "
          f"{int(win.kernels.sum())} kernels in {sum(len(w) for w in win.of_seq)} windows, {len(win.len)} distinct")
    train, test = df[train_mask], df[test_mask].copy()
    model, kernel_norm, row_norm = fit(train.reset_index(drop=True), win, sid[train_mask], n_ops, n_cls)
    model.eval()
    margin = predict(model, kernel_norm, row_norm, test, win, sid[test_mask])
    accuracy = networks.held_out(test, train, margin, "transformer")
    if args.write:
        prov = networks.provenance("transformer over the kernel sequence", HYPER, train, args.help_sample)
        data = networks.write(lambda storage, q: file_bytes(model, kernel_norm, row_norm, train, accuracy, schema,
                                                            storage, prov, args.help_sample, q),
                              "transformer", OUT, args.storage, test)
        n = write_parity(df[test_mask], seqs, sid, schema)
        print(f"wrote {OUT} ({len(data)} bytes, {args.storage}) and {PARITY} ({n} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
