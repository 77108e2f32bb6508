"""Transformers written from configuration dicts straight into graph-only ONNX (onnx.helper, no model code).

No weight is ever materialized: every weight is an initializer with dims and dtype and an external-data
reference to a file that does not exist (PerfCard reads structure only, see graph_only.py), so a 70B
graph builds in about a second and a few MB. Symbolic dims: `batch`, `sequence` and, for decode steps,
`past_sequence` (the KV cache length).

Op patterns follow what torch.onnx.export (torch 1.13, opset 17) emits for the same modules, so that
PerfCard's fusion rules see realistic graphs: nn.Linear -> MatMul(+Add), LayerNormalization, decomposed
erf/tanh GELU and RMSNorm, Softmax over the last axis, Gather embeddings, Shape/Range position ids,
Where-masked causal scores, Concat KV caches. scripts/zoo/check_transformers.py compares these graphs with
torch exports of scripts/checks/check_shapes.py's small modules (params and MACs through `perfcard analyze`).

Families (`arch`): "bert" (BERT/RoBERTa post-LN encoders), "gpt" (GPT-2/OPT learned-position decoders),
"llama" (RMSNorm, rotary, SwiGLU, grouped-query attention: Llama, Mistral, Qwen2/2.5/3, Phi-3, CodeLlama),
"vit" (torchvision-style ViT).

    /usr/bin/python3 -m scripts.zoo.transformers [--only ID,...] [--list] [--check-params]
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time

import onnx
from onnx import TensorProto, helper

from scripts.zoo import graph_only, manifest

OPSET = 17
GENERATOR = "transformers"


class GraphBuilder:
    """Collects nodes, declared (payload-free) initializers and graph inputs/outputs."""

    def __init__(self, name: str, weights_file: str, dtype: int = TensorProto.FLOAT):
        self.name, self.weights_file, self.dtype = name, weights_file, dtype
        self.nodes, self.inits, self.inputs, self.outputs = [], [], [], []
        self.offset = 0
        self.n = 0

    def fresh(self, hint: str) -> str:
        self.n += 1
        return f"{hint}_{self.n}"

    def weight(self, name: str, dims: list[int]) -> str:
        t = TensorProto()
        t.name, t.data_type = name, self.dtype
        t.dims.extend(dims)
        t.data_location = TensorProto.EXTERNAL
        nbytes = math.prod(dims) * 4
        for k, v in (("location", self.weights_file), ("offset", str(self.offset)), ("length", str(nbytes))):
            e = t.external_data.add()
            e.key, e.value = k, v
        self.offset += (nbytes + 63) // 64 * 64  # the 64-byte alignment onnx's own external writer uses
        self.inits.append(t)
        return name

    def const(self, values, dtype=TensorProto.INT64, scalar=False) -> str:
        """A Constant node, as the exporter emits for shapes, axes and scalars (not a parameter)."""
        vals = values if isinstance(values, list) else [values]
        out = self.fresh("const")
        dims = [] if scalar else [len(vals)]
        self.nodes.append(helper.make_node("Constant", [], [out], value=helper.make_tensor(out, dtype, dims, vals)))
        return out

    def fconst(self, v: float) -> str:
        return self.const(float(v), TensorProto.FLOAT, scalar=True)

    def op(self, op_type: str, inputs: list[str], n_out: int = 1, **attrs):
        outs = [self.fresh(op_type.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, **attrs))
        return outs[0] if n_out == 1 else outs

    def input(self, name: str, elem: int, dims: list) -> str:
        self.inputs.append(helper.make_tensor_value_info(name, elem, dims))
        return name

    def output(self, value: str, name: str, elem: int, dims: list) -> None:
        self.nodes.append(helper.make_node("Identity", [value], [name]))
        self.outputs.append(helper.make_tensor_value_info(name, elem, dims))

    def model(self) -> onnx.ModelProto:
        g = helper.make_graph(self.nodes, self.name, self.inputs, self.outputs, self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="perfcard-zoo")
        m.ir_version = 8
        return m

    # ---- layers, in the exporter's op patterns

    def linear(self, x: str, prefix: str, n_in: int, n_out: int, bias: bool = True) -> str:
        y = self.op("MatMul", [x, self.weight(prefix + ".weight_t", [n_in, n_out])])
        return self.op("Add", [y, self.weight(prefix + ".bias", [n_out])]) if bias else y

    def layer_norm(self, x: str, prefix: str, dim: int, eps: float) -> str:
        return self.op("LayerNormalization", [x, self.weight(prefix + ".weight", [dim]),
                                              self.weight(prefix + ".bias", [dim])], axis=-1, epsilon=eps)

    def rms_norm(self, x: str, prefix: str, dim: int, eps: float) -> str:
        var = self.op("ReduceMean", [self.op("Pow", [x, self.fconst(2.0)])], axes=[-1], keepdims=1)
        inv = self.op("Div", [self.fconst(1.0), self.op("Sqrt", [self.op("Add", [var, self.fconst(eps)])])])
        return self.op("Mul", [self.weight(prefix + ".weight", [dim]), self.op("Mul", [x, inv])])

    def gelu_erf(self, x: str) -> str:
        e = self.op("Erf", [self.op("Div", [x, self.fconst(math.sqrt(2.0))])])
        return self.op("Mul", [self.op("Mul", [x, self.op("Add", [e, self.fconst(1.0)])]), self.fconst(0.5)])

    def gelu_tanh(self, x: str) -> str:
        cube = self.op("Mul", [self.op("Pow", [x, self.fconst(3.0)]), self.fconst(0.044715)])
        inner = self.op("Mul", [self.op("Add", [x, cube]), self.fconst(math.sqrt(2.0 / math.pi))])
        t = self.op("Add", [self.op("Tanh", [inner]), self.fconst(1.0)])
        return self.op("Mul", [self.op("Mul", [x, self.fconst(0.5)]), t])

    def act(self, x: str, kind: str) -> str:
        if kind == "gelu":
            return self.gelu_erf(x)
        if kind == "gelu_new":
            return self.gelu_tanh(x)
        if kind == "relu":
            return self.op("Relu", [x])
        raise ValueError(kind)

    def heads(self, x: str, n: int, d: int) -> str:
        """[b, s, n*d] -> [b, n, s, d]"""
        return self.op("Transpose", [self.op("Reshape", [x, self.const([0, 0, n, d])])], perm=[0, 2, 1, 3])

    def merge_heads(self, x: str, width: int) -> str:
        return self.op("Reshape", [self.op("Transpose", [x], perm=[0, 2, 1, 3]), self.const([0, 0, width])])

    def dim(self, x: str, axis: int) -> str:
        """A 0-d int64 holding x.shape[axis] (Shape -> Gather, as the exporter emits for .size(i))."""
        return self.op("Gather", [self.op("Shape", [x]), self.const(axis, scalar=True)], axis=0)

    def attention(self, q: str, k: str, v: str, head_dim: int, add_mask: str | None = None,
                  causal: tuple[str, str] | None = None) -> str:
        """softmax(q k^T / sqrt(d) [+ mask]) v over [b, h, s, d] tensors."""
        s = self.op("Div", [self.op("MatMul", [q, self.op("Transpose", [k], perm=[0, 1, 3, 2])]),
                            self.fconst(math.sqrt(head_dim))])
        if add_mask is not None:
            s = self.op("Add", [s, add_mask])
        if causal is not None:
            q_pos, k_pos = causal
            allowed = self.op("LessOrEqual", [self.op("Unsqueeze", [k_pos, self.const([0])]),
                                              self.op("Unsqueeze", [q_pos, self.const([1])])])
            s = self.op("Where", [allowed, s, self.fconst(-3.4028234663852886e38)])
        return self.op("MatMul", [self.op("Softmax", [s], axis=-1), v])


# ----------------------------------------------------------------------------------------------------
# Families
# ----------------------------------------------------------------------------------------------------

def build_bert(c: dict, b: GraphBuilder) -> None:
    h, nh = c["hidden"], c["heads"]
    ids = b.input("input_ids", TensorProto.INT64, ["batch", "sequence"])
    mask = b.input("attention_mask", TensorProto.INT64, ["batch", "sequence"])
    seq = b.dim(ids, 1)
    start = c.get("position_offset", 0)  # RoBERTa numbers positions from padding_idx + 1 = 2
    pos = b.op("Unsqueeze", [b.op("Range", [b.const(start, scalar=True),
                                            b.op("Add", [seq, b.const(start, scalar=True)]),
                                            b.const(1, scalar=True)]), b.const([0])])
    types = b.op("ConstantOfShape", [b.op("Shape", [ids])],
                 value=helper.make_tensor("zero", TensorProto.INT64, [1], [0]))
    x = b.op("Add", [b.op("Add", [b.op("Gather", [b.weight("emb.word", [c["vocab"], h]), ids]),
                                  b.op("Gather", [b.weight("emb.type", [c["type_vocab"], h]), types])]),
                     b.op("Gather", [b.weight("emb.pos", [c["max_pos"], h]), pos])])
    x = b.layer_norm(x, "emb.norm", h, c["eps"])
    ext = b.op("Cast", [b.op("Unsqueeze", [mask, b.const([1, 2])])], to=TensorProto.FLOAT)
    ext = b.op("Mul", [b.op("Sub", [b.fconst(1.0), ext]), b.fconst(-3.4028234663852886e38)])
    d = h // nh
    for i in range(c["layers"]):
        p = f"layer{i}"
        q, k, v = (b.heads(b.linear(x, f"{p}.{n}", h, h), nh, d) for n in ("q", "k", "v"))
        a = b.linear(b.merge_heads(b.attention(q, k, v, d, add_mask=ext), h), f"{p}.attn_out", h, h)
        x = b.layer_norm(b.op("Add", [x, a]), f"{p}.norm1", h, c["eps"])
        f = b.linear(b.act(b.linear(x, f"{p}.up", h, c["inter"]), c.get("act", "gelu")), f"{p}.down", c["inter"], h)
        x = b.layer_norm(b.op("Add", [x, f]), f"{p}.norm2", h, c["eps"])
    b.output(x, "hidden", TensorProto.FLOAT, ["batch", "sequence", h])
    if c.get("pooler", True):
        first = b.op("Gather", [x, b.const(0, scalar=True)], axis=1)
        pooled = b.op("Tanh", [b.linear(first, "pooler", h, h)])
        b.output(pooled, "pooled", TensorProto.FLOAT, ["batch", h])


def _positions(b: GraphBuilder, ids: str, past: str | None):
    """(query positions, key positions) as 1-D int64: past_len .. past_len+s and 0 .. past_len+s."""
    s = b.dim(ids, 1)
    past_len = b.dim(past, 2) if past is not None else b.const(0, scalar=True)
    total = b.op("Add", [past_len, s])
    one, zero = b.const(1, scalar=True), b.const(0, scalar=True)
    return b.op("Range", [past_len, total, one]), b.op("Range", [zero, total, one])


def _kv_io(b: GraphBuilder, c: dict, decode: bool, kvh: int, hd: int):
    pasts = []
    if decode:
        for i in range(c["layers"]):
            pasts.append((b.input(f"past_key_{i}", TensorProto.FLOAT, ["batch", kvh, "past_sequence", hd]),
                          b.input(f"past_value_{i}", TensorProto.FLOAT, ["batch", kvh, "past_sequence", hd])))
    return pasts


def _present(b: GraphBuilder, i: int, k: str, v: str, kvh: int, hd: int, decode: bool) -> None:
    total = "total_sequence" if decode else "sequence"
    b.output(k, f"present_key_{i}", TensorProto.FLOAT, ["batch", kvh, total, hd])
    b.output(v, f"present_value_{i}", TensorProto.FLOAT, ["batch", kvh, total, hd])


def build_gpt(c: dict, b: GraphBuilder, decode: bool) -> None:
    """GPT-2 (pre-LN, tanh GELU, fused c_attn) and OPT (pre-LN or post-LN, ReLU, separate q/k/v, learned
    positions offset by 2, optional project_in/out around a narrower embedding)."""
    h, nh = c["hidden"], c["heads"]
    d = h // nh
    ids = b.input("input_ids", TensorProto.INT64, ["batch", "sequence"])
    pasts = _kv_io(b, c, decode, nh, d)
    q_pos, k_pos = _positions(b, ids, pasts[0][0] if pasts else None)
    emb_dim = c.get("embed_dim", h)
    wte = b.weight("wte", [c["vocab"], emb_dim])
    x = b.op("Gather", [wte, ids])
    if emb_dim != h:
        x = b.linear(x, "project_in", emb_dim, h, bias=False)
    pos = b.op("Unsqueeze", [b.op("Add", [q_pos, b.const(c.get("position_offset", 0), scalar=True)]), b.const([0])])
    x = b.op("Add", [x, b.op("Gather", [b.weight("wpe", [c["max_pos"] + c.get("position_offset", 0), h]), pos])])
    pre_ln = c.get("pre_ln", True)
    for i in range(c["layers"]):
        p = f"h{i}"
        r = b.layer_norm(x, f"{p}.ln1", h, c["eps"]) if pre_ln else x
        if c.get("fused_qkv", False):
            q, k, v = b.op("Split", [b.linear(r, f"{p}.c_attn", h, 3 * h), b.const([h, h, h])], n_out=3, axis=2)
        else:
            q, k, v = (b.linear(r, f"{p}.{n}", h, h) for n in ("q", "k", "v"))
        q, k, v = b.heads(q, nh, d), b.heads(k, nh, d), b.heads(v, nh, d)
        if pasts:
            k = b.op("Concat", [pasts[i][0], k], axis=2)
            v = b.op("Concat", [pasts[i][1], v], axis=2)
        _present(b, i, k, v, nh, d, decode)
        a = b.linear(b.merge_heads(b.attention(q, k, v, d, causal=(q_pos, k_pos)), h), f"{p}.attn_out", h, h)
        x = b.op("Add", [x, a])
        if not pre_ln:
            x = b.layer_norm(x, f"{p}.ln1", h, c["eps"])
        r = b.layer_norm(x, f"{p}.ln2", h, c["eps"]) if pre_ln else x
        f = b.linear(b.act(b.linear(r, f"{p}.fc1", h, c["inter"]), c["act"]), f"{p}.fc2", c["inter"], h)
        x = b.op("Add", [x, f])
        if not pre_ln:
            x = b.layer_norm(x, f"{p}.ln2", h, c["eps"])
    if pre_ln:
        x = b.layer_norm(x, "ln_f", h, c["eps"])
    if emb_dim != h:
        x = b.linear(x, "project_out", h, emb_dim, bias=False)
    # Tied head: one initializer read through a Transpose node, so the shared matrix counts once.
    logits = b.op("MatMul", [x, b.op("Transpose", [wte], perm=[1, 0])])
    b.output(logits, "logits", TensorProto.FLOAT, ["batch", "sequence", c["vocab"]])


def build_llama(c: dict, b: GraphBuilder, decode: bool) -> None:
    h, nh, kvh = c["hidden"], c["heads"], c["kv_heads"]
    hd = c.get("head_dim", h // nh)
    ids = b.input("input_ids", TensorProto.INT64, ["batch", "sequence"])
    pasts = _kv_io(b, c, decode, kvh, hd)
    q_pos, k_pos = _positions(b, ids, pasts[0][0] if pasts else None)
    embed = b.weight("embed", [c["vocab"], h])
    x = b.op("Gather", [embed, ids])
    # Rotary tables from the positions of this step; inv_freq = theta^(-2i/d) is computed in-graph so it is
    # no parameter (the exporter would carry it as a buffer initializer).
    expo = b.op("Div", [b.op("Cast", [b.op("Range", [b.const(0, scalar=True), b.const(hd, scalar=True),
                                                     b.const(2, scalar=True)])], to=TensorProto.FLOAT),
                        b.fconst(hd)])
    inv_freq = b.op("Reciprocal", [b.op("Pow", [b.fconst(c["theta"]), expo])])
    t = b.op("Cast", [q_pos], to=TensorProto.FLOAT)
    freqs = b.op("Mul", [b.op("Unsqueeze", [t, b.const([1])]), b.op("Unsqueeze", [inv_freq, b.const([0])])])
    emb = b.op("Concat", [freqs, freqs], axis=-1)
    cos = b.op("Unsqueeze", [b.op("Cos", [emb]), b.const([0, 1])])
    sin = b.op("Unsqueeze", [b.op("Sin", [emb]), b.const([0, 1])])
    half = hd // 2

    def rope(x_):
        x1 = b.op("Slice", [x_, b.const([0]), b.const([half]), b.const([-1])])
        x2 = b.op("Slice", [x_, b.const([half]), b.const([hd]), b.const([-1])])
        rot = b.op("Concat", [b.op("Neg", [x2]), x1], axis=-1)
        return b.op("Add", [b.op("Mul", [x_, cos]), b.op("Mul", [rot, sin])])

    def repeat_kv(x_):
        if nh == kvh:
            return x_
        e = b.op("Expand", [b.op("Unsqueeze", [x_, b.const([2])]), b.const([1, 1, nh // kvh, 1, 1])])
        return b.op("Reshape", [e, b.const([0, nh, -1, hd])])

    bias = c.get("qkv_bias", False)
    for i in range(c["layers"]):
        p = f"layers{i}"
        r = b.rms_norm(x, f"{p}.input_norm", h, c["eps"])
        q = b.heads(b.linear(r, f"{p}.q_proj", h, nh * hd, bias), nh, hd)
        k = b.heads(b.linear(r, f"{p}.k_proj", h, kvh * hd, bias), kvh, hd)
        v = b.heads(b.linear(r, f"{p}.v_proj", h, kvh * hd, bias), kvh, hd)
        if c.get("qk_norm", False):  # Qwen3: RMSNorm over each head before rotary
            q = b.rms_norm(q, f"{p}.q_norm", hd, c["eps"])
            k = b.rms_norm(k, f"{p}.k_norm", hd, c["eps"])
        q, k = rope(q), rope(k)
        if pasts:
            k = b.op("Concat", [pasts[i][0], k], axis=2)
            v = b.op("Concat", [pasts[i][1], v], axis=2)
        _present(b, i, k, v, kvh, hd, decode)
        o = b.attention(q, repeat_kv(k), repeat_kv(v), hd, causal=(q_pos, k_pos))
        x = b.op("Add", [x, b.linear(b.merge_heads(o, nh * hd), f"{p}.o_proj", nh * hd, h, bias=False)])
        r = b.rms_norm(x, f"{p}.post_attention_norm", h, c["eps"])
        gate = b.linear(r, f"{p}.gate_proj", h, c["inter"], bias=False)
        silu = b.op("Mul", [gate, b.op("Sigmoid", [gate])])
        up = b.linear(r, f"{p}.up_proj", h, c["inter"], bias=False)
        x = b.op("Add", [x, b.linear(b.op("Mul", [silu, up]), f"{p}.down_proj", c["inter"], h, bias=False)])
    x = b.rms_norm(x, "norm", h, c["eps"])
    head = b.op("Transpose", [embed], perm=[1, 0]) if c.get("tie", False) else b.weight("lm_head_t", [h, c["vocab"]])
    b.output(b.op("MatMul", [x, head]), "logits", TensorProto.FLOAT, ["batch", "sequence", c["vocab"]])


def build_vit(c: dict, b: GraphBuilder) -> None:
    h, nh, p, img = c["hidden"], c["heads"], c["patch"], c["image"]
    d, n = h // nh, (c["image"] // c["patch"]) ** 2
    x = b.input("pixels", TensorProto.FLOAT, ["batch", 3, img, img])
    x = b.op("Conv", [x, b.weight("conv_proj.weight", [h, 3, p, p]), b.weight("conv_proj.bias", [h])],
             kernel_shape=[p, p], strides=[p, p])
    x = b.op("Transpose", [b.op("Reshape", [x, b.const([0, h, n])])], perm=[0, 2, 1])
    cls = b.op("Expand", [b.weight("class_token", [1, 1, h]),
                          b.op("Concat", [b.op("Unsqueeze", [b.dim(x, 0), b.const([0])]), b.const([1, 1])], axis=0)])
    x = b.op("Add", [b.op("Concat", [cls, x], axis=1), b.weight("pos_embedding", [1, n + 1, h])])
    for i in range(c["layers"]):
        pre = f"blocks{i}"
        r = b.layer_norm(x, f"{pre}.ln1", h, c["eps"])
        q, k, v = b.op("Split", [b.linear(r, f"{pre}.qkv", h, 3 * h), b.const([h, h, h])], n_out=3, axis=2)
        o = b.attention(b.heads(q, nh, d), b.heads(k, nh, d), b.heads(v, nh, d), d)
        x = b.op("Add", [x, b.linear(b.merge_heads(o, h), f"{pre}.out_proj", h, h)])
        r = b.layer_norm(x, f"{pre}.ln2", h, c["eps"])
        x = b.op("Add", [x, b.linear(b.gelu_erf(b.linear(r, f"{pre}.mlp1", h, c["inter"])), f"{pre}.mlp2", c["inter"], h)])
    x = b.layer_norm(x, "ln", h, c["eps"])
    first = b.op("Gather", [x, b.const(0, scalar=True)], axis=1)
    b.output(b.linear(first, "head", h, c["classes"]), "logits", TensorProto.FLOAT, ["batch", c["classes"]])


def build(c: dict, graph_id: str, decode: bool = False) -> onnx.ModelProto:
    b = GraphBuilder(graph_id, graph_id + ".onnx.weights")
    arch = c["arch"]
    if arch == "bert":
        build_bert(c, b)
    elif arch == "gpt":
        build_gpt(c, b, decode)
    elif arch == "llama":
        build_llama(c, b, decode)
    elif arch == "vit":
        build_vit(c, b)
    else:
        raise ValueError(arch)
    return b.model()


def config_params(c: dict) -> int:
    """Parameter count from the configuration alone (closed form, independent of the graph code)."""
    h, i, L, V = c["hidden"], c["inter"], c["layers"], c.get("vocab", 0)
    if c["arch"] == "bert":
        emb = (V + c["max_pos"] + c["type_vocab"]) * h + 2 * h
        layer = 4 * (h * h + h) + 2 * h + (h * i + i) + (i * h + h) + 2 * h
        return emb + L * layer + (h * h + h if c.get("pooler", True) else 0)
    if c["arch"] == "gpt":
        e = c.get("embed_dim", h)
        emb = V * e + (c["max_pos"] + c.get("position_offset", 0)) * h + (2 * e * h if e != h else 0)
        layer = 4 * (h * h + h) + 4 * h + (h * i + i) + (i * h + h)
        return emb + L * layer + (2 * h if c.get("pre_ln", True) else 0)
    if c["arch"] == "llama":
        nh, kvh = c["heads"], c["kv_heads"]
        hd = c.get("head_dim", h // nh)
        attn = h * nh * hd * 2 + h * kvh * hd * 2 + ((nh + 2 * kvh) * hd if c.get("qkv_bias") else 0)
        layer = attn + 3 * h * i + 2 * h + (2 * hd if c.get("qk_norm") else 0)
        return V * h * (1 if c.get("tie") else 2) + L * layer + h
    if c["arch"] == "vit":
        n = (c["image"] // c["patch"]) ** 2
        layer = (3 * h * h + 3 * h) + (h * h + h) + 4 * h + (h * i + i) + (i * h + h)
        return 3 * c["patch"] ** 2 * h + h + h + (n + 1) * h + L * layer + 2 * h + h * c["classes"] + c["classes"]
    raise ValueError(c["arch"])


# ----------------------------------------------------------------------------------------------------
# The catalogue. `published`: the parameter count the model's authors publish (HF model card / safetensors
# total / paper / torchvision docs), checked to 0.5%; None where no exact figure is published.
# `mlenergy`: model ids in ML.ENERGY (v1 legacy, v2, v3) that are this very architecture.
# ----------------------------------------------------------------------------------------------------

def _bert(hidden, layers, heads, **kw):
    c = dict(arch="bert", vocab=30522, hidden=hidden, layers=layers, heads=heads, inter=4 * hidden, max_pos=512,
             type_vocab=2, eps=1e-12)
    c.update(kw)
    return c


def _gpt2(hidden, layers, heads):
    return dict(arch="gpt", vocab=50257, hidden=hidden, layers=layers, heads=heads, inter=4 * hidden, max_pos=1024,
                eps=1e-5, act="gelu_new", fused_qkv=True)


def _opt(hidden, layers, heads, **kw):
    c = dict(arch="gpt", vocab=50272, hidden=hidden, layers=layers, heads=heads, inter=4 * hidden, max_pos=2048,
             position_offset=2, eps=1e-5, act="relu")
    c.update(kw)
    return c


def _llama(hidden, layers, heads, kv_heads, inter, vocab, theta, eps=1e-5, **kw):
    c = dict(arch="llama", hidden=hidden, layers=layers, heads=heads, kv_heads=kv_heads, inter=inter, vocab=vocab,
             theta=theta, eps=eps)
    c.update(kw)
    return c


def _vit(hidden, layers, heads, inter, patch):
    return dict(arch="vit", image=224, patch=patch, hidden=hidden, layers=layers, heads=heads, inter=inter,
                classes=1000, eps=1e-6)


L1_7B = ["metaai/llama-7B", "lmsys/vicuna-7B", "tatsu-lab/alpaca-7B", "BAIR/koala-7b", "project-baize/baize-v2-7B",
         "Neutralzz/BiLLa-7B-SFT", "FreedomIntelligence/phoenix-inst-chat-7b"]
L1_13B = ["metaai/llama-13B", "lmsys/vicuna-13B", "BAIR/koala-13b", "camel-ai/CAMEL-13B-Combined-Data",
          "nomic-ai/gpt4all-13b-snoozy", "openaccess-ai-collective/manticore-13b-chat-pyg"]

CATALOG = [
    # id, family, hf id, config, published params, mlenergy ids
    ("bert-base-uncased", "bert", "google-bert/bert-base-uncased", _bert(768, 12, 12), 109_482_240, []),
    ("bert-large-uncased", "bert", "google-bert/bert-large-uncased", _bert(1024, 24, 16), 335_141_888, []),
    ("roberta-base", "roberta", "FacebookAI/roberta-base",
     _bert(768, 12, 12, vocab=50265, max_pos=514, type_vocab=1, eps=1e-5, position_offset=2), 124_645_632, []),
    ("roberta-large", "roberta", "FacebookAI/roberta-large",
     _bert(1024, 24, 16, vocab=50265, max_pos=514, type_vocab=1, eps=1e-5, position_offset=2), 355_359_744, []),
    ("gpt2", "gpt2", "openai-community/gpt2", _gpt2(768, 12, 12), 124_439_808, []),
    ("gpt2-medium", "gpt2", "openai-community/gpt2-medium", _gpt2(1024, 24, 16), 354_823_168, []),
    ("gpt2-large", "gpt2", "openai-community/gpt2-large", _gpt2(1280, 36, 20), 774_030_080, []),
    ("gpt2-xl", "gpt2", "openai-community/gpt2-xl", _gpt2(1600, 48, 25), 1_557_611_200, []),
    ("opt-125m", "opt", "facebook/opt-125m", _opt(768, 12, 12), 125_239_296, []),
    ("opt-350m", "opt", "facebook/opt-350m", _opt(1024, 24, 16, embed_dim=512, pre_ln=False), 331_196_416, []),
    ("opt-1.3b", "opt", "facebook/opt-1.3b", _opt(2048, 24, 32), 1_315_758_080, []),
    ("opt-2.7b", "opt", "facebook/opt-2.7b", _opt(2560, 32, 32), 2_651_596_800, []),
    ("opt-6.7b", "opt", "facebook/opt-6.7b", _opt(4096, 32, 32), 6_658_473_984, []),
    ("opt-13b", "opt", "facebook/opt-13b", _opt(5120, 40, 40), 12_853_473_280, []),
    ("llama-2-7b", "llama", "meta-llama/Llama-2-7b-hf", _llama(4096, 32, 32, 32, 11008, 32000, 1e4),
     6_738_415_616, L1_7B + ["metaai/Llama-2-7b-chat-hf"]),
    ("llama-2-13b", "llama", "meta-llama/Llama-2-13b-hf", _llama(5120, 40, 40, 40, 13824, 32000, 1e4),
     13_015_864_320, L1_13B + ["metaai/Llama-2-13b-chat-hf"]),
    ("llama-2-70b", "llama", "meta-llama/Llama-2-70b-hf", _llama(8192, 80, 64, 8, 28672, 32000, 1e4),
     68_976_648_192, []),
    ("codellama-7b", "llama", "codellama/CodeLlama-7b-hf", _llama(4096, 32, 32, 32, 11008, 32016, 1e6),
     None, ["codellama/CodeLlama-7b-hf"]),
    ("codellama-13b", "llama", "codellama/CodeLlama-13b-hf", _llama(5120, 40, 40, 40, 13824, 32016, 1e6),
     None, ["codellama/CodeLlama-13b-hf"]),
    ("codellama-34b", "llama", "codellama/CodeLlama-34b-hf", _llama(8192, 48, 64, 8, 22016, 32000, 1e6),
     None, ["codellama/CodeLlama-34b-hf"]),
    ("llama-3.1-8b", "llama", "meta-llama/Llama-3.1-8B", _llama(4096, 32, 32, 8, 14336, 128256, 5e5),
     8_030_261_248, ["meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Meta-Llama-3.1-8B-Instruct"]),
    ("llama-3.1-70b", "llama", "meta-llama/Llama-3.1-70B", _llama(8192, 80, 64, 8, 28672, 128256, 5e5),
     70_553_706_496, ["meta-llama/Llama-3.1-70B-Instruct", "meta-llama/Llama-3.3-70B-Instruct",
                      "meta-llama/Meta-Llama-3.1-70B-Instruct"]),
    ("mistral-7b-v0.1", "mistral", "mistralai/Mistral-7B-v0.1", _llama(4096, 32, 32, 8, 14336, 32000, 1e4),
     7_241_732_096, []),
    ("mistral-7b-v0.3", "mistral", "mistralai/Mistral-7B-v0.3", _llama(4096, 32, 32, 8, 14336, 32768, 1e6),
     7_248_023_552, ["mistralai/Mistral-7B-Instruct-v0.3"]),
    ("mistral-nemo-12b", "mistral", "mistralai/Mistral-Nemo-Base-2407",
     _llama(5120, 40, 32, 8, 14336, 131072, 1e6, head_dim=128), 12_247_782_400,
     ["mistralai/Mistral-Nemo-Instruct-2407"]),
    ("phi-3-mini", "phi3", "microsoft/Phi-3-mini-4k-instruct", _llama(3072, 32, 32, 32, 8192, 32064, 1e4),
     3_821_079_552, ["microsoft/Phi-3-mini-4k-instruct"]),
    ("phi-3-medium", "phi3", "microsoft/Phi-3-medium-4k-instruct", _llama(5120, 40, 40, 10, 17920, 32064, 1e4),
     13_960_238_080, ["microsoft/Phi-3-medium-4k-instruct"]),
    ("qwen2.5-0.5b", "qwen2", "Qwen/Qwen2.5-0.5B",
     _llama(896, 24, 14, 2, 4864, 151936, 1e6, eps=1e-6, qkv_bias=True, tie=True), 494_032_768, []),
    ("qwen2.5-1.5b", "qwen2", "Qwen/Qwen2.5-1.5B",
     _llama(1536, 28, 12, 2, 8960, 151936, 1e6, eps=1e-6, qkv_bias=True, tie=True), 1_543_714_304, []),
    ("qwen2.5-7b", "qwen2", "Qwen/Qwen2.5-7B",
     _llama(3584, 28, 28, 4, 18944, 152064, 1e6, eps=1e-6, qkv_bias=True), 7_615_616_512, []),
    ("qwen2.5-14b", "qwen2", "Qwen/Qwen2.5-14B",
     _llama(5120, 48, 40, 8, 13824, 152064, 1e6, eps=1e-6, qkv_bias=True), 14_770_033_664, []),
    ("qwen2.5-32b", "qwen2", "Qwen/Qwen2.5-32B",
     _llama(5120, 64, 40, 8, 27648, 152064, 1e6, eps=1e-6, qkv_bias=True), 32_763_876_352, []),
    ("qwen3-8b", "qwen3", "Qwen/Qwen3-8B",
     _llama(4096, 36, 32, 8, 12288, 151936, 1e6, eps=1e-6, head_dim=128, qk_norm=True), 8_190_735_360,
     ["Qwen/Qwen3-8B"]),
    ("qwen3-14b", "qwen3", "Qwen/Qwen3-14B",
     _llama(5120, 40, 40, 8, 17408, 151936, 1e6, eps=1e-6, head_dim=128, qk_norm=True), 14_768_307_200,
     ["Qwen/Qwen3-14B"]),
    ("qwen3-32b", "qwen3", "Qwen/Qwen3-32B",
     _llama(5120, 64, 64, 8, 25600, 151936, 1e6, eps=1e-6, head_dim=128, qk_norm=True), 32_762_123_264,
     ["Qwen/Qwen3-32B"]),
    ("vit-b-16", "vit", "google/vit-base-patch16-224", _vit(768, 12, 12, 3072, 16), 86_567_656, []),
    ("vit-l-16", "vit", "google/vit-large-patch16-224", _vit(1024, 24, 16, 4096, 16), 304_326_632, []),
    ("vit-h-14", "vit", "google/vit-huge-patch14-224-in21k", _vit(1280, 32, 16, 5120, 14), 632_045_800, []),
    # tiny configs: fast tests and the torch cross-check (scripts/zoo/check_transformers.py)
    ("tiny-bert", "bert", None, _bert(64, 2, 4, vocab=1000, inter=128), None, []),
    ("tiny-gpt2", "gpt2", None, dict(_gpt2(64, 2, 4), vocab=1000), None, []),
    ("tiny-llama", "llama", None, _llama(64, 2, 4, 2, 172, 1000, 1e4, eps=1e-6), None, []),
]

PREFILL_BIND = {"batch": 1, "sequence": 128}
DECODE_BIND = {"batch": 1, "sequence": 1, "past_sequence": 512}


def graphs():
    """(graph id, catalogue row, decode?) for every graph the generator writes."""
    for row in CATALOG:
        arch = row[3]["arch"]
        if arch in ("gpt", "llama"):
            yield f"{row[0]}.prefill", row, False
            yield f"{row[0]}.decode", row, True
        else:
            yield row[0], row, False


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", help="comma-separated catalogue ids")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--mlenergy-ids", action="store_true", help="print the catalogue ids ML.ENERGY measured, comma-separated")
    ap.add_argument("--no-analyze", action="store_true", help="write graphs only, leave the manifest alone")
    args = ap.parse_args()
    if args.mlenergy_ids:
        print(",".join(row[0] for row in CATALOG if row[5]))
        return 0
    only = set(args.only.split(",")) if args.only else None
    out_dir = os.path.join(manifest.OUT_DIR, GENERATOR)
    os.makedirs(out_dir, exist_ok=True)
    rows = []
    with manifest.ManifestWriter(GENERATOR) as mw:
        for gid, (cid, family, hf, cfg, published, mle), decode in graphs():
            if only and cid not in only:
                continue
            if args.list:
                print(gid)
                continue
            t0 = time.time()
            model = build(cfg, gid, decode)
            path = os.path.join(out_dir, gid + ".onnx")
            graph_only.save(model, path)
            t_build = time.time() - t0
            if args.no_analyze:
                continue
            bind = dict(DECODE_BIND if decode else PREFILL_BIND) if cfg["arch"] != "vit" else {"batch": 1}
            tot = manifest.analyze(path, bind)
            names = {}
            if hf:
                names["hf"] = hf
            if mle:
                names["mlenergy"] = mle
            mw.add(dict(id=gid, file=f"{GENERATOR}/{gid}.onnx", family=family, variant=cid,
                        config=dict(cfg, step="decode" if decode else ("prefill" if cfg["arch"] in ("gpt", "llama")
                                                                       else "encode")),
                        opset=OPSET, inputs=manifest.input_dims(model), bind=bind,
                        macs=tot["macs"], flops=tot["flops"], params=tot["params"], nodes=len(model.graph.node),
                        activations=tot.get("activations"), structure_hash=manifest.structure_hash(model),
                        names=names, published_params=published, config_params=config_params(cfg)))
            rows.append((gid, tot["params"], config_params(cfg), published, t_build))
    if rows:
        print(f"{'graph':28s} {'perfcard':>15s} {'config':>15s} {'published':>15s} {'miss':>7s} {'build_s':>7s}")
        bad = 0
        for gid, p, cp, pub, tb in rows:
            ref = pub if pub else cp
            miss = abs(p - ref) / ref
            bad += miss > 0.005 or p != cp
            pub_s = f"{pub:,d}" if pub else "-"
            print(f"{gid:28s} {p:15,d} {cp:15,d} {pub_s:>15s} {miss:7.3%} {tb:7.2f}")
        print(f"{len(rows)} graphs, {bad} off (PerfCard params != closed form, or > 0.5% from the published count)")
        return 1 if bad else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
