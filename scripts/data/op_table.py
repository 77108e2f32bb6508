"""Per-op table: NeuSight GEMM kernels and Vidur per-operator times, each row keyed the way the core describes
a node (op type, class, input/output shapes and dtypes; FLOPs, bytes and params by the core itself, through
scripts/data/core_cost.py).

NeuSight `linear` (torch.nn.functional.linear, X[M,K] @ W^T) -> MatMul X[M,K] x W[K,N] with W an initializer
(whether NeuSight's runs add a bias is not in the data; a bias would add M*N FLOPs); `bmm` -> MatMul
A[B,M,K] x B[B,K,N], both activations. Vidur's ops of one transformer layer, per tensor-parallel shard:
emb -> Gather, layernorms -> SimplifiedLayerNormalization (RMSNorm, gated-MLP models) or
LayerNormalization, projections -> MatMul with the shard's weight, add -> Add; `attn_rope` and the gated
`mlp_act` are several ONNX ops (no single node to key them by) and are reported unmatched.
"""
from __future__ import annotations

import hashlib
import json
from collections import Counter

import pandas as pd

from . import catalog_features, sources
from .graph_features import op_key, op_vocab
from .core_cost import Node, Tensor, cost_nodes

OP_COLUMNS = ["source", "split", "device_id", "device_raw", "device_kind", "in_catalog", "precision", "runtime",
              "n_devices", "op_type", "op_domain", "op_vocab_id", "op_class", "dtype", "input_shapes",
              "input_initializer", "output_shape", "macs", "flops", "bytes_read", "bytes_written", "params",
              "latency_ms", "source_op", "source_model"] + catalog_features.DEVICE_FEATURES


def hash_split(key: str) -> str:
    """Deterministic train/val/test from a group key (70/15/15 by the first 8 hex digits of its sha256)."""
    u = int(hashlib.sha256(str(key).encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    return "train" if u < 0.70 else ("val" if u < 0.85 else "test")


def _row(node: Node, c: dict, base: dict) -> dict:
    return dict(base, op_type=node.op_type, op_domain=node.domain,
                op_vocab_id=op_vocab().get(op_key(node.domain, node.op_type), 0), op_class=c["op_class"],
                dtype=node.inputs[0].dtype,
                input_shapes=json.dumps([t.shape for t in node.inputs], separators=(",", ":")),
                input_initializer=json.dumps([t.initializer for t in node.inputs]),
                output_shape=json.dumps(node.outputs[0].shape, separators=(",", ":")),
                macs=c["macs"], flops=c["flops"], bytes_read=c["bytes_read"], bytes_written=c["bytes_written"],
                params=c["params"])


def neusight_nodes(op: str, b: int, m: int, n: int, k: int) -> Node:
    f = "float32"
    if op == "linear":
        lead = [b] if b != 1 else []
        return Node("MatMul", [Tensor(lead + [m, k], f), Tensor([k, n], f, True)], [Tensor(lead + [m, n], f)])
    return Node("MatMul", [Tensor([b, m, k], f), Tensor([b, k, n], f)], [Tensor([b, m, n], f)])


def vidur_node(op: str, r) -> Node | None:
    f = "float16"
    t, tp = int(r.vidur_num_tokens), int(r.vidur_tp)
    e, h, kv, ff = int(r.vidur_n_embd), int(r.vidur_n_head), int(r.vidur_n_kv_head), int(r.vidur_n_expanded_embd)
    hd = e // h
    gated = bool(r.vidur_use_gated_mlp)
    x = Tensor([t, e], f)
    if op == "emb":
        return Node("Gather", [Tensor([int(r.vidur_vocab_size) // tp, e], f, True), Tensor([t], "int64")], [x])
    if op in ("input_layernorm", "post_attention_layernorm"):
        if gated:
            return Node("SimplifiedLayerNormalization", [x, Tensor([e], f, True)], [x], domain="com.microsoft")
        return Node("LayerNormalization", [x, Tensor([e], f, True), Tensor([e], f, True)], [x])
    if op == "attn_pre_proj":
        qkv = (h + 2 * kv) * hd // tp
        return Node("MatMul", [x, Tensor([e, qkv], f, True)], [Tensor([t, qkv], f)])
    if op == "attn_post_proj":
        d = h * hd // tp
        return Node("MatMul", [Tensor([t, d], f), Tensor([d, e], f, True)], [x])
    if op == "mlp_up_proj":
        u = ff * (2 if gated else 1) // tp
        return Node("MatMul", [x, Tensor([e, u], f, True)], [Tensor([t, u], f)])
    if op == "mlp_down_proj":
        d = ff // tp
        return Node("MatMul", [Tensor([t, d], f), Tensor([d, e], f, True)], [x])
    if op == "mlp_act" and not gated:
        return Node("Gelu", [Tensor([t, ff // tp], f)], [Tensor([t, ff // tp], f)])
    if op == "add":
        return Node("Add", [x, x], [x])
    return None


def _base(r, source: str) -> dict:
    dev = catalog_features.canonical(r.device_id)
    prec = r.precision
    return dict({"source": source, "device_id": dev, "device_raw": r.device_raw, "device_kind": r.device_kind,
                 "in_catalog": catalog_features.in_catalog(dev), "precision": prec, "runtime": r.runtime,
                 "n_devices": r.n_devices, "latency_ms": r.latency_ms},
                **{k: v for k, v in catalog_features.features(dev, prec).items() if k in catalog_features.DEVICE_FEATURES})


def build(report: dict) -> pd.DataFrame:
    described = []  # (node, base columns): costed together by the core at the end
    ns = sources.load("neusight_gemm_ops_fp32")
    rep = report.setdefault("neusight_gemm_ops_fp32", {"matched": Counter(), "unmatched": Counter()})
    for r in ns.itertuples(index=False):
        node = neusight_nodes(r.model, int(r.batch), int(r.neusight_M), int(r.neusight_N), int(r.neusight_K))
        described.append((node, dict(_base(r, "neusight_gemm_ops_fp32"), split=r.neusight_split,
                                     source_op=r.model, source_model=r.neusight_kernel)))
        rep["matched"][catalog_features.canonical(r.device_id) or f"raw:{r.device_raw}"] += 1
    vd = sources.load("vidur_mlp_op_times")
    rep = report.setdefault("vidur_mlp_op_times", {"matched": Counter(), "unmatched": Counter()})
    for r in vd.itertuples(index=False):
        node = vidur_node(r.vidur_op, r)
        dev = catalog_features.canonical(r.device_id) or f"raw:{r.device_raw}"
        if node is None:
            rep["unmatched"][(dev, f"{r.vidur_op}: several ONNX ops, no single node")] += 1
            continue
        described.append((node, dict(_base(r, "vidur_mlp_op_times"), split=hash_split(r.model),
                                     source_op=r.vidur_op, source_model=r.model)))
        rep["matched"][dev] += 1
    from scripts.roofline.perfcard_eval import cli
    costs = cost_nodes([n for n, _ in described], cli())
    rows = [_row(n, c, base) for (n, base), c in zip(described, costs)]
    return pd.DataFrame(rows, columns=OP_COLUMNS)
