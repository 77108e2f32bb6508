"""Checks perfcard's shape inference against onnx's own, over a coverage set of exported graphs.

For every model of the set and every opset in 13..17 the script
  1. exports the model with torch.onnx.export (graph only: weights go to an external-data file that is
     deleted; value_info is stripped, so perfcard has to infer every shape with its own rules),
  2. runs `perfcard analyze --per-node --json` with the dims bound (batch=2, sequence=128, past=64,
     height=width=320 for detection),
  3. runs onnx.shape_inference.infer_shapes(data_prop=True) on a copy whose symbolic input dims are
     replaced by the same numbers -- the independent reference,
  4. compares every value (main graph and If/Loop bodies): where onnx knows a dim (or the rank, or the
     dtype) and perfcard says something else, that is a mismatch (a bug in a rule); where onnx knows a
     full shape and perfcard does not, that is a mismatch too ("missing"); where perfcard knows more than
     onnx, that is fine; where neither knows, it is reported.
  5. checks the graph outputs of the torch models once more against the module run eagerly on inputs of
     the bound sizes: equal where perfcard gives an exact size, no larger where it gives an upper bound
     (detection outputs after NMS) -- this covers the values onnx's data propagation cannot follow
     (Range lengths, float shape arithmetic in detection transforms).
It also reports every op in unknown_ops, every node whose shape_status is not "inferred", and every
graph output with unknown dims, prints a per-model table and exits 1 on mismatches or unknown ops.

Models: torchvision classification / detection / segmentation (weights=None), transformers written
here in plain torch from configs (BERT-, GPT-2-, LLaMA- (prefill and decode with a past KV cache) and
ViT-style), and small quantized graphs built with onnx.helper.

    /usr/bin/python3 -m scripts.checks.check_shapes          # everything, all opsets
    /usr/bin/python3 -m scripts.checks.check_shapes --only llama --opsets 13,17 -v
    /usr/bin/python3 -m scripts.checks.check_shapes --list

Exports are cached (--cache, default /tmp/perfcard_shape_cache) keyed by model and opset; --fresh
re-exports. Use /usr/bin/python3 (torch 1.13, torchvision 0.14, onnx 1.12).
"""
from __future__ import annotations

import argparse
import io
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import traceback
import warnings

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, shape_inference

from scripts import paths

DEFAULT_CLI = paths.CLI
BINDINGS = {"batch": 2, "sequence": 128, "past": 64, "height": 320, "width": 320}
OPSETS = [13, 14, 15, 16, 17]

DTYPE_NAMES = {
    TensorProto.FLOAT: "float32", TensorProto.UINT8: "uint8", TensorProto.INT8: "int8",
    TensorProto.UINT16: "uint16", TensorProto.INT16: "int16", TensorProto.INT32: "int32",
    TensorProto.INT64: "int64", TensorProto.STRING: "string", TensorProto.BOOL: "bool",
    TensorProto.FLOAT16: "float16", TensorProto.DOUBLE: "float64", TensorProto.UINT32: "uint32",
    TensorProto.UINT64: "uint64", TensorProto.COMPLEX64: "complex64", TensorProto.COMPLEX128: "complex128",
    TensorProto.BFLOAT16: "bfloat16",
}


# ----------------------------------------------------------------------------------------------------
# Transformers written from configs in plain torch (no external model code).
# ----------------------------------------------------------------------------------------------------

def transformer_modules():
    import torch
    from torch import nn
    import torch.nn.functional as F

    class BertEmbeddings(nn.Module):
        def __init__(self, vocab, hidden, max_pos, type_vocab):
            super().__init__()
            self.word = nn.Embedding(vocab, hidden)
            self.pos = nn.Embedding(max_pos, hidden)
            self.token_type = nn.Embedding(type_vocab, hidden)
            self.norm = nn.LayerNorm(hidden, eps=1e-12)
            self.register_buffer("position_ids", torch.arange(max_pos).expand((1, -1)))

        def forward(self, input_ids, token_type_ids=None):
            seq_len = input_ids.size(1)
            position_ids = self.position_ids[:, :seq_len]          # Slice with an end from Shape
            if token_type_ids is None:
                token_type_ids = torch.zeros_like(input_ids)
            x = self.word(input_ids) + self.token_type(token_type_ids) + self.pos(position_ids)
            return self.norm(x)

    class BertSelfAttention(nn.Module):
        def __init__(self, hidden, heads):
            super().__init__()
            self.h, self.d = heads, hidden // heads
            self.q, self.k, self.v = nn.Linear(hidden, hidden), nn.Linear(hidden, hidden), nn.Linear(hidden, hidden)

        def split_heads(self, x):
            new_shape = x.size()[:-1] + (self.h, self.d)            # Shape -> Slice -> Concat -> Reshape
            return x.view(new_shape).permute(0, 2, 1, 3)

        def forward(self, x, mask_add):
            q, k, v = self.split_heads(self.q(x)), self.split_heads(self.k(x)), self.split_heads(self.v(x))
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.d) + mask_add
            p = F.softmax(scores, dim=-1)
            ctx = torch.matmul(p, v).permute(0, 2, 1, 3).contiguous()
            return ctx.view(ctx.size()[:-2] + (self.h * self.d,))

    class BertLayer(nn.Module):
        def __init__(self, hidden, heads, inter):
            super().__init__()
            self.attn = BertSelfAttention(hidden, heads)
            self.attn_out = nn.Linear(hidden, hidden)
            self.norm1 = nn.LayerNorm(hidden, eps=1e-12)
            self.up = nn.Linear(hidden, inter)
            self.down = nn.Linear(inter, hidden)
            self.norm2 = nn.LayerNorm(hidden, eps=1e-12)

        def forward(self, x, mask_add):
            x = self.norm1(x + self.attn_out(self.attn(x, mask_add)))
            return self.norm2(x + self.down(F.gelu(self.up(x))))

    class Bert(nn.Module):
        def __init__(self, vocab=1000, hidden=64, layers=2, heads=4, inter=128, max_pos=512, type_vocab=2):
            super().__init__()
            self.emb = BertEmbeddings(vocab, hidden, max_pos, type_vocab)
            self.layers = nn.ModuleList([BertLayer(hidden, heads, inter) for _ in range(layers)])
            self.pool = nn.Linear(hidden, hidden)

        def forward(self, input_ids, attention_mask):
            x = self.emb(input_ids)
            # In the activations' precision: the GPU campaign runs these modules in fp16 and bf16 too.
            ext = attention_mask[:, None, None, :].to(x.dtype)
            ext = (1.0 - ext) * torch.finfo(x.dtype).min
            for layer in self.layers:
                x = layer(x, ext)
            pooled = torch.tanh(self.pool(x[:, 0]))                # Gather with a scalar index
            return x, pooled

    class Conv1D(nn.Module):  # GPT-2's transposed linear: addmm on a flattened view
        def __init__(self, nf, nx):
            super().__init__()
            self.nf = nf
            self.weight = nn.Parameter(torch.randn(nx, nf) * 0.02)
            self.bias = nn.Parameter(torch.zeros(nf))

        def forward(self, x):
            size_out = x.size()[:-1] + (self.nf,)
            x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
            return x.view(size_out)

    def new_gelu(x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))

    class GPT2Block(nn.Module):
        def __init__(self, n_embd, n_head):
            super().__init__()
            self.n_embd, self.n_head = n_embd, n_head
            self.ln_1 = nn.LayerNorm(n_embd)
            self.c_attn = Conv1D(3 * n_embd, n_embd)
            self.c_proj = Conv1D(n_embd, n_embd)
            self.ln_2 = nn.LayerNorm(n_embd)
            self.c_fc = Conv1D(4 * n_embd, n_embd)
            self.c_proj2 = Conv1D(n_embd, 4 * n_embd)

        def heads(self, x):
            new_shape = x.size()[:-1] + (self.n_head, x.size(-1) // self.n_head)
            return x.view(new_shape).permute(0, 2, 1, 3)

        def forward(self, x):
            h = self.ln_1(x)
            q, k, v = self.c_attn(h).split(self.n_embd, dim=2)     # Split with sizes
            q, k, v = self.heads(q), self.heads(k), self.heads(v)
            w = torch.matmul(q, k.transpose(-1, -2)) / torch.full([], v.size(-1) ** 0.5, dtype=torch.float32)
            s = q.size(-2)
            i = torch.arange(s, device=x.device)                    # causal mask from Shape -> Range
            causal = i[None, :] <= i[:, None]
            w = torch.where(causal, w, torch.tensor(torch.finfo(torch.float32).min, dtype=w.dtype))
            w = F.softmax(w, dim=-1)
            a = torch.matmul(w, v).permute(0, 2, 1, 3).contiguous()
            a = a.view(a.size()[:-2] + (a.size(-2) * a.size(-1),))
            x = x + self.c_proj(a)
            return x + self.c_proj2(new_gelu(self.c_fc(self.ln_2(x))))

    class GPT2(nn.Module):
        def __init__(self, vocab=1000, n_embd=64, n_layer=2, n_head=4, n_pos=1024):
            super().__init__()
            self.wte = nn.Embedding(vocab, n_embd)
            self.wpe = nn.Embedding(n_pos, n_embd)
            self.blocks = nn.ModuleList([GPT2Block(n_embd, n_head) for _ in range(n_layer)])
            self.ln_f = nn.LayerNorm(n_embd)

        def forward(self, input_ids):
            b, s = input_ids.size()
            pos = torch.arange(0, s, dtype=torch.long, device=input_ids.device).unsqueeze(0)  # learned positions
            x = self.wte(input_ids) + self.wpe(pos)
            for blk in self.blocks:
                x = blk(x)
            x = self.ln_f(x)
            return torch.matmul(x, self.wte.weight.t())

    class RMSNorm(nn.Module):
        def __init__(self, dim, eps=1e-6):
            super().__init__()
            self.eps = eps
            self.weight = nn.Parameter(torch.ones(dim))

        def forward(self, x):
            var = x.pow(2).mean(-1, keepdim=True)
            return self.weight * (x * torch.rsqrt(var + self.eps))

    def rotate_half(x):
        x1 = x[..., : x.shape[-1] // 2]                             # Slice with ends computed from Shape
        x2 = x[..., x.shape[-1] // 2:]
        return torch.cat((-x2, x1), dim=-1)

    def repeat_kv(x, n_rep):
        b, kvh, slen, hd = x.shape
        if n_rep == 1:
            return x
        x = x[:, :, None, :, :].expand(b, kvh, n_rep, slen, hd)
        return x.reshape(b, kvh * n_rep, slen, hd)

    class LlamaAttention(nn.Module):
        def __init__(self, dim, n_heads, n_kv_heads, theta=10000.0):
            super().__init__()
            self.h, self.kvh, self.hd = n_heads, n_kv_heads, dim // n_heads
            self.q_proj = nn.Linear(dim, n_heads * self.hd, bias=False)
            self.k_proj = nn.Linear(dim, n_kv_heads * self.hd, bias=False)
            self.v_proj = nn.Linear(dim, n_kv_heads * self.hd, bias=False)
            self.o_proj = nn.Linear(n_heads * self.hd, dim, bias=False)
            self.register_buffer("inv_freq", 1.0 / (theta ** (torch.arange(0, self.hd, 2).float() / self.hd)))

        def forward(self, x, past_k=None, past_v=None):
            b, s, _ = x.shape
            q = self.q_proj(x).view(b, s, self.h, self.hd).transpose(1, 2)
            k = self.k_proj(x).view(b, s, self.kvh, self.hd).transpose(1, 2)
            v = self.v_proj(x).view(b, s, self.kvh, self.hd).transpose(1, 2)
            past_len = past_k.shape[2] if past_k is not None else 0
            # rotary embeddings from Range over the positions of this step
            t = torch.arange(past_len, past_len + s, device=x.device).to(torch.float32)
            freqs = torch.outer(t, self.inv_freq)
            emb = torch.cat((freqs, freqs), dim=-1)
            cos, sin = emb.cos()[None, None, :, :].to(q.dtype), emb.sin()[None, None, :, :].to(q.dtype)
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
            if past_k is not None:
                k = torch.cat([past_k, k], dim=2)
                v = torch.cat([past_v, v], dim=2)
            present = (k, v)
            kk, vv = repeat_kv(k, self.h // self.kvh), repeat_kv(v, self.h // self.kvh)
            w = torch.matmul(q, kk.transpose(2, 3)) / math.sqrt(self.hd)
            total = kk.shape[2]
            q_pos = torch.arange(total - s, total, device=x.device)
            k_pos = torch.arange(0, total, device=x.device)
            mask = k_pos[None, :] <= q_pos[:, None]
            w = w.masked_fill(~mask[None, None], float("-inf"))
            w = F.softmax(w.float(), dim=-1).to(q.dtype)
            o = torch.matmul(w, vv).transpose(1, 2).reshape(b, s, -1)
            return self.o_proj(o), present

    class LlamaMLP(nn.Module):
        def __init__(self, dim, hidden):
            super().__init__()
            self.gate = nn.Linear(dim, hidden, bias=False)
            self.up = nn.Linear(dim, hidden, bias=False)
            self.down = nn.Linear(hidden, dim, bias=False)

        def forward(self, x):
            return self.down(F.silu(self.gate(x)) * self.up(x))     # SwiGLU

    class LlamaBlock(nn.Module):
        def __init__(self, dim, n_heads, n_kv_heads, hidden):
            super().__init__()
            self.norm1, self.norm2 = RMSNorm(dim), RMSNorm(dim)
            self.attn = LlamaAttention(dim, n_heads, n_kv_heads)
            self.mlp = LlamaMLP(dim, hidden)

        def forward(self, x, past_k=None, past_v=None):
            a, present = self.attn(self.norm1(x), past_k, past_v)
            x = x + a
            return x + self.mlp(self.norm2(x)), present

    class Llama(nn.Module):
        def __init__(self, vocab=1000, dim=64, layers=2, n_heads=4, n_kv_heads=2, hidden=172, with_past=False):
            super().__init__()
            self.with_past = with_past
            self.embed = nn.Embedding(vocab, dim)
            self.layers = nn.ModuleList([LlamaBlock(dim, n_heads, n_kv_heads, hidden) for _ in range(layers)])
            self.norm = RMSNorm(dim)
            self.lm_head = nn.Linear(dim, vocab, bias=False)

        def forward(self, input_ids, *past):
            x = self.embed(input_ids)
            presents = []
            for i, layer in enumerate(self.layers):
                pk, pv = (past[2 * i], past[2 * i + 1]) if self.with_past else (None, None)
                x, (k, v) = layer(x, pk, pv)
                presents += [k, v]
            return (self.lm_head(self.norm(x)), *presents)

    class ViTBlock(nn.Module):
        def __init__(self, dim, heads, mlp):
            super().__init__()
            self.h = heads
            self.n1, self.n2 = nn.LayerNorm(dim, eps=1e-6), nn.LayerNorm(dim, eps=1e-6)
            self.qkv = nn.Linear(dim, 3 * dim)
            self.proj = nn.Linear(dim, dim)
            self.fc1, self.fc2 = nn.Linear(dim, mlp), nn.Linear(mlp, dim)

        def forward(self, x):
            B, N, C = x.shape
            qkv = self.qkv(self.n1(x)).reshape(B, N, 3, self.h, C // self.h).permute(2, 0, 3, 1, 4)
            q, k, v = qkv.unbind(0)                                 # Gather / Split of a 5-D tensor
            a = (q @ k.transpose(-2, -1)) * (C // self.h) ** -0.5
            a = a.softmax(dim=-1)
            x = x + self.proj((a @ v).transpose(1, 2).reshape(B, N, C))
            return x + self.fc2(F.gelu(self.fc1(self.n2(x))))

    class ViT(nn.Module):
        def __init__(self, img=64, patch=16, dim=64, depth=2, heads=4, mlp=128, classes=10):
            super().__init__()
            self.patch = nn.Conv2d(3, dim, patch, patch)
            n = (img // patch) ** 2
            self.cls = nn.Parameter(torch.zeros(1, 1, dim))
            self.pos = nn.Parameter(torch.zeros(1, n + 1, dim))
            self.blocks = nn.ModuleList([ViTBlock(dim, heads, mlp) for _ in range(depth)])
            self.norm = nn.LayerNorm(dim, eps=1e-6)
            self.head = nn.Linear(dim, classes)

        def forward(self, x):
            x = self.patch(x).flatten(2).transpose(1, 2)
            cls = self.cls.expand(x.shape[0], -1, -1)               # Expand with -1 (Where/Equal chain)
            x = torch.cat((cls, x), dim=1) + self.pos
            for blk in self.blocks:
                x = blk(x)
            return self.head(self.norm(x)[:, 0])

    return dict(Bert=Bert, GPT2=GPT2, Llama=Llama, ViT=ViT)


# ----------------------------------------------------------------------------------------------------
# The coverage set. Each torch entry returns (module, args, input_names, output_names, dynamic_axes).
# ----------------------------------------------------------------------------------------------------

def _cls(ctor, size=224, **kw):
    def make():
        import torch
        m = ctor(weights=None, **kw).eval()
        x = torch.randn(1, 3, size, size)
        return m, (x,), ["input"], ["logits"], {"input": {0: "batch"}, "logits": {0: "batch"}}
    return make


def _det(ctor, size=320, **kw):
    def make():
        import torch
        m = ctor(weights=None, weights_backbone=None, **kw).eval()
        x = torch.rand(3, size, size)
        return m, ([x],), ["images"], None, {"images": {1: "height", 2: "width"}}
    return make


def _seg(ctor, size=320, **kw):
    def make():
        import torch
        m = ctor(weights=None, weights_backbone=None, **kw).eval()
        x = torch.rand(1, 3, size, size)
        return m, (x,), ["input"], ["out"], {"input": {0: "batch", 2: "height", 3: "width"}}
    return make


def _bert():
    import torch
    m = transformer_modules()["Bert"]().eval()
    ids = torch.randint(0, 1000, (2, 16))
    mask = torch.ones(2, 16, dtype=torch.long)
    dyn = {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"},
           "hidden": {0: "batch", 1: "sequence"}, "pooled": {0: "batch"}}
    return m, (ids, mask), ["input_ids", "attention_mask"], ["hidden", "pooled"], dyn


def _gpt2():
    import torch
    m = transformer_modules()["GPT2"]().eval()
    ids = torch.randint(0, 1000, (2, 16))
    return m, (ids,), ["input_ids"], ["logits"], {"input_ids": {0: "batch", 1: "sequence"},
                                                 "logits": {0: "batch", 1: "sequence"}}


def _llama(with_past):
    def make():
        import torch
        layers, kvh, hd = 2, 2, 16
        m = transformer_modules()["Llama"](layers=layers, n_kv_heads=kvh, with_past=with_past).eval()
        ids = torch.randint(0, 1000, (2, 16 if not with_past else 1))
        args, names, dyn = [ids], ["input_ids"], {"input_ids": {0: "batch", 1: "sequence"}}
        outs = ["logits"]
        dyn["logits"] = {0: "batch", 1: "sequence"}
        for i in range(layers):
            for kv in ("key", "value"):
                if with_past:
                    n = f"past_{kv}_{i}"
                    args.append(torch.randn(2, kvh, 8, hd))
                    names.append(n)
                    dyn[n] = {0: "batch", 2: "past"}
                o = f"present_{kv}_{i}"
                outs.append(o)
                dyn[o] = {0: "batch", 2: "total"}
        return m, tuple(args), names, outs, dyn
    return make


def _vit_plain():
    import torch
    m = transformer_modules()["ViT"]().eval()
    x = torch.randn(2, 3, 64, 64)
    return m, (x,), ["pixels"], ["logits"], {"pixels": {0: "batch"}, "logits": {0: "batch"}}


# ---- quantized graphs, built with onnx.helper (the opset is the model's default-domain import)

def _q_init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def quant_conv_model(opset):
    """QuantizeLinear -> QLinearConv -> DequantizeLinear, a per-channel DequantizeLinear of weights feeding
    a float Conv, and ConvInteger, on a symbolic batch."""
    rng = np.random.default_rng(0)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8, 16, 16])
    y1 = helper.make_tensor_value_info("y1", TensorProto.FLOAT, None)
    y2 = helper.make_tensor_value_info("y2", TensorProto.FLOAT, None)
    y3 = helper.make_tensor_value_info("y3", TensorProto.INT32, None)
    inits = [
        _q_init("x_scale", np.float32(0.05)), _q_init("x_zp", np.uint8(128)),
        _q_init("w_q", rng.integers(-127, 127, (16, 8, 3, 3)).astype(np.int8)),
        _q_init("w_scale", np.full((16,), 0.01, np.float32)), _q_init("w_zp", np.zeros((16,), np.int8)),
        _q_init("y_scale", np.float32(0.1)), _q_init("y_zp", np.uint8(128)),
        _q_init("bias", np.zeros((16,), np.int32)),
        _q_init("wi", rng.integers(0, 255, (4, 8, 1, 1)).astype(np.uint8)), _q_init("wi_zp", np.uint8(3)),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zp"], ["xq"]),
        helper.make_node("QLinearConv", ["xq", "x_scale", "x_zp", "w_q", "w_scale", "w_zp", "y_scale", "y_zp", "bias"],
                         ["yq"], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("DequantizeLinear", ["yq", "y_scale", "y_zp"], ["y1"]),
        helper.make_node("DequantizeLinear", ["w_q", "w_scale", "w_zp"], ["w_f"], axis=0),
        helper.make_node("Conv", ["x", "w_f"], ["y2"], pads=[0, 0, 0, 0], kernel_shape=[3, 3]),
        helper.make_node("ConvInteger", ["xq", "wi", "x_zp", "wi_zp"], ["y3"], strides=[2, 2]),
    ]
    g = helper.make_graph(nodes, "quant_conv", [x], [y1, y2, y3], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def quant_matmul_model(opset):
    """DynamicQuantizeLinear -> MatMulInteger (and QLinearMatMul) on [batch, sequence, 64] activations."""
    rng = np.random.default_rng(1)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "sequence", 64])
    outs = [helper.make_tensor_value_info(n, None if False else t, None)
            for n, t in (("y_int", TensorProto.INT32), ("y_f", TensorProto.FLOAT), ("y_q", TensorProto.UINT8),
                         ("scale", TensorProto.FLOAT), ("zp", TensorProto.UINT8))]
    inits = [
        _q_init("w", rng.integers(0, 255, (64, 32)).astype(np.uint8)), _q_init("w_zp", np.uint8(128)),
        _q_init("w_scale", np.float32(0.02)), _q_init("y_scale", np.float32(0.3)), _q_init("y_zp", np.uint8(0)),
    ]
    nodes = [
        helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "scale", "zp"]),
        helper.make_node("MatMulInteger", ["xq", "w", "zp", "w_zp"], ["y_int"]),
        helper.make_node("Cast", ["y_int"], ["y_int_f"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["scale", "w_scale"], ["s2"]),
        helper.make_node("Mul", ["y_int_f", "s2"], ["y_f"]),
        helper.make_node("QLinearMatMul", ["xq", "scale", "zp", "w", "w_scale", "w_zp", "y_scale", "y_zp"], ["y_q"]),
    ]
    g = helper.make_graph(nodes, "quant_matmul", [x], outs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def qdq_model(opset):
    """A QDQ-style graph: per-tensor Q/DQ around activations, int8 weights dequantized per axis, with a
    Reshape whose target shape is computed from Shape (the dequantized tensor keeps the symbolic batch)."""
    rng = np.random.default_rng(2)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "sequence", 32])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    inits = [
        _q_init("s", np.float32(0.1)), _q_init("zp", np.int8(0)),
        _q_init("wq", rng.integers(-100, 100, (32, 48)).astype(np.int8)),
        _q_init("ws", np.full((48,), 0.01, np.float32)), _q_init("wzp", np.zeros((48,), np.int8)),
        _q_init("tail", np.array([6, 8], np.int64)), _q_init("zero", np.array([0], np.int64)),
        _q_init("two", np.array([2], np.int64)),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "s", "zp"], ["xd"]),
        helper.make_node("DequantizeLinear", ["wq", "ws", "wzp"], ["wd"], axis=1),
        helper.make_node("MatMul", ["xd", "wd"], ["h"]),
        helper.make_node("Shape", ["h"], ["hs"]),
        helper.make_node("Slice", ["hs", "zero", "two"], ["bs"]),
        helper.make_node("Concat", ["bs", "tail"], ["new_shape"], axis=0),
        helper.make_node("Reshape", ["h", "new_shape"], ["h4"]),
        helper.make_node("QuantizeLinear", ["h4", "s", "zp"], ["hq"]),
        helper.make_node("DequantizeLinear", ["hq", "s", "zp"], ["y"]),
    ]
    g = helper.make_graph(nodes, "qdq", [x], [y], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def _tv(name):
    import torchvision
    return getattr(torchvision.models, name)


def _tvd(name):
    from torchvision.models import detection
    return getattr(detection, name)


def _tvs(name):
    from torchvision.models import segmentation
    return getattr(segmentation, name)


def coverage_set():
    """name -> (kind, maker). kind: 'torch' (maker returns export arguments) or 'onnx' (maker(opset))."""
    s = {}
    for name, size, kw in [
        ("resnet18", 224, {}), ("mobilenet_v3_small", 224, {}), ("efficientnet_b0", 224, {}),
        ("convnext_tiny", 224, {}), ("vit_b_16", 224, {}), ("swin_t", 224, {}), ("regnet_y_400mf", 224, {}),
        ("shufflenet_v2_x1_0", 224, {}), ("squeezenet1_1", 224, {}),
        ("googlenet", 224, {"aux_logits": False, "init_weights": False}),
        ("inception_v3", 299, {"aux_logits": False, "init_weights": False}),
    ]:
        s[name] = ("torch", (lambda n=name, sz=size, k=kw: _cls(_tv(n), sz, **k)()))
    for name, kw in [
        ("fasterrcnn_mobilenet_v3_large_320_fpn", {}), ("ssdlite320_mobilenet_v3_large", {}),
        ("retinanet_resnet50_fpn", {}), ("maskrcnn_resnet50_fpn", {}), ("keypointrcnn_resnet50_fpn", {}),
    ]:
        s[name] = ("torch", (lambda n=name, k=kw: _det(_tvd(n), **k)()))
    for name, kw in [("fcn_resnet50", {"aux_loss": False}), ("deeplabv3_mobilenet_v3_large", {"aux_loss": False}),
                     ("lraspp_mobilenet_v3_large", {})]:
        s[name] = ("torch", (lambda n=name, k=kw: _seg(_tvs(n), **k)()))
    s["bert_encoder"] = ("torch", _bert)
    s["gpt2_decoder"] = ("torch", _gpt2)
    s["llama_prefill"] = ("torch", _llama(False))
    s["llama_decode_past"] = ("torch", _llama(True))
    s["vit_plain"] = ("torch", _vit_plain)
    s["quant_conv"] = ("onnx", quant_conv_model)
    s["quant_matmul"] = ("onnx", quant_matmul_model)
    s["qdq_reshape"] = ("onnx", qdq_model)
    return s


# ----------------------------------------------------------------------------------------------------
# Export, reference inference, comparison.
# ----------------------------------------------------------------------------------------------------

def strip_value_info(g):
    del g.value_info[:]
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                strip_value_info(a.g)
            elif a.type == onnx.AttributeProto.GRAPHS:
                for sg in a.graphs:
                    strip_value_info(sg)


def save_graph_only(model, path):
    """Saves the graph with weights over 1 KiB as external data, then deletes the data file."""
    strip_value_info(model.graph)
    with tempfile.TemporaryDirectory() as td:
        tmp = os.path.join(td, "m.onnx")
        onnx.save_model(model, tmp, save_as_external_data=True, all_tensors_to_one_file=True,
                        location="weights.bin", size_threshold=1024)
        os.replace(tmp, path)  # weights.bin goes with the temp dir


def export(name, kind, maker, opset, path):
    if kind == "onnx":
        save_graph_only(maker(opset), path)
        return
    import torch
    torch.manual_seed(0)
    m, args, in_names, out_names, dyn = maker()
    f = io.BytesIO()
    with warnings.catch_warnings():  # no torch.no_grad(): it would pick fused fast paths that do not export
        warnings.simplefilter("ignore")
        torch.onnx.export(m, args, f, opset_version=opset, input_names=in_names, output_names=out_names,
                          dynamic_axes=dyn, do_constant_folding=True)
    save_graph_only(onnx.load_from_string(f.getvalue()), path)


def runtime_shapes(name, kind, maker, path):
    """A second, independent reference for the graph outputs: the torch module run eagerly on inputs of the
    bound sizes. Cached beside the exports (one file per model: the opset does not change the outputs)."""
    if kind != "torch":
        return None
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    import torch
    torch.manual_seed(0)
    m, args, in_names, _, dyn = maker()
    counter = [0]

    def rebind(a):
        if isinstance(a, (list, tuple)):
            return type(a)(rebind(x) for x in a)
        n = in_names[counter[0]] if counter[0] < len(in_names) else None
        counter[0] += 1
        shape = list(a.shape)
        for axis, sym in (dyn.get(n, {}) if n else {}).items():
            shape[axis] = BINDINGS[sym] if sym in BINDINGS else shape[axis]
        if a.dtype.is_floating_point:
            return torch.rand(shape, dtype=a.dtype) if n == "images" else torch.randn(shape, dtype=a.dtype)
        if n == "attention_mask":
            return torch.ones(shape, dtype=a.dtype)
        return torch.randint(0, 10, shape, dtype=a.dtype)

    bound_args = rebind(args)
    with torch.no_grad():
        out = m(*bound_args)
    flat = []

    def flatten(o):
        if isinstance(o, (list, tuple)):
            for x in o:
                flatten(x)
        elif isinstance(o, dict):
            for x in o.values():
                flatten(x)
        elif isinstance(o, torch.Tensor):
            flat.append(list(o.shape))

    flatten(out)
    with open(path, "w") as f:
        json.dump(flat, f)
    return flat


def compare_runtime(doc, actual, st):
    """Graph outputs against the eager run: equal where perfcard claims an exact size, at least as large
    where it claims an upper bound (estimated)."""
    outs = doc["model"]["outputs"]
    if len(outs) != len(actual):
        st.mismatch.append(f"graph has {len(outs)} outputs, the eager module returns {len(actual)}")
        return
    for o, real in zip(outs, actual):
        inf = o.get("inferred", {})
        dims = inf.get("shape")
        st.runtime_compared += 1
        if dims is None or len(dims) != len(real) or any(d is None for d in dims):
            st.mismatch.append(f"output {o['name']}: ours {fmt(inf.get('dtype'), dims)} vs eager torch {real} [runtime]")
        elif inf.get("estimated"):
            if any(d < r for d, r in zip(dims, real)):
                st.mismatch.append(f"output {o['name']}: ours {dims} (upper bound) is below eager torch {real} [runtime]")
        elif dims != real:
            st.mismatch.append(f"output {o['name']}: ours {dims} vs eager torch {real} [runtime]")


def reference_shapes(path):
    """onnx's shape inference (data_prop) on a copy with the symbolic input dims bound."""
    m = onnx.load(path, load_external_data=False)
    strip_value_info(m.graph)
    for vi in m.graph.input:
        if not vi.type.HasField("tensor_type") or not vi.type.tensor_type.HasField("shape"):
            continue
        for d in vi.type.tensor_type.shape.dim:
            if d.HasField("dim_param") and d.dim_param in BINDINGS:
                d.dim_value = BINDINGS[d.dim_param]
    # Declared output shapes carry symbols such as "total" that perfcard ignores; drop them so onnx does not
    # merge them into its result.
    for vi in m.graph.output:
        if vi.type.HasField("tensor_type"):
            vi.type.tensor_type.ClearField("shape")
    inferred = shape_inference.infer_shapes(m, check_type=False, strict_mode=False, data_prop=True)
    out = {}

    def collect(g, scope):
        for vi in list(g.input) + list(g.value_info) + list(g.output):
            t = vi.type
            if not t.HasField("tensor_type"):
                continue
            tt = t.tensor_type
            dims = None
            if tt.HasField("shape"):
                dims = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
            out[(scope, vi.name)] = (DTYPE_NAMES.get(tt.elem_type), dims)
        for n in g.node:
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    collect(a.g, scope + (n.name or n.output[0], a.name))

    collect(inferred.graph, ())
    return out, inferred


def without_output_shapes(path, tmpdir):
    """A copy whose graph outputs declare their type but no shape: perfcard falls back on declared shapes
    where a rule cannot tell a rank, which would hide a gap in the rules from this check."""
    m = onnx.load(path, load_external_data=False)
    for vi in m.graph.output:
        if vi.type.HasField("tensor_type"):
            vi.type.tensor_type.ClearField("shape")
    out = os.path.join(tmpdir, os.path.basename(path))
    onnx.save_model(m, out)
    return out


def run_cli(cli, path):
    cmd = [cli, "analyze", path, "--per-node", "--json"]
    for k, v in BINDINGS.items():
        cmd += ["--dim", f"{k}={v}"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"perfcard failed ({p.returncode}): {p.stderr.strip()[:2000]}")
    return json.loads(p.stdout)


def walk_nodes(nodes, scope, fn):
    for n in nodes:
        fn(n, scope)
        for sg in n.get("subgraphs", []) or []:
            if "nodes" in sg:
                walk_nodes(sg["nodes"], scope + (n["name"] or n["outputs"][0]["name"], sg["attribute"]), fn)


def fmt(dtype, dims):
    if dims is None:
        return f"{dtype}[?]"
    return f"{dtype}[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


class Stats:
    def __init__(self):
        self.nodes = 0
        self.compared = 0
        self.mismatch = []
        self.unknown = []       # values whose shape perfcard does not know fully
        self.neither = []       # ... and onnx does not know either
        self.unknown_ops = []
        self.not_inferred = []
        self.bad_outputs = []
        self.estimated = 0
        self.warnings = 0
        self.runtime_compared = 0
        self.error = None


def compare(doc, ref):
    st = Stats()
    st.unknown_ops = list(doc.get("unknown_ops", []))
    st.warnings = len(doc.get("warnings", []))
    seen = set()

    def visit(n, scope):
        st.nodes += 1
        label = f"{n['op_type']} '{n['name']}'" + (f" in {'/'.join(scope)}" if scope else "")
        if n.get("shape_status") != "inferred":
            st.not_inferred.append(f"{label}: shape_status={n.get('shape_status')}")
        for o in n["outputs"]:
            if o is None:
                continue
            key = (scope, o["name"])
            if key in seen:
                continue
            seen.add(key)
            ours_dims = o["shape"]
            ours_dt = o["dtype"]
            if o.get("estimated"):
                st.estimated += 1
            ours_full = ours_dims is not None and all(d is not None for d in ours_dims)
            r = ref.get(key)
            rdt, rdims = r if r else (None, None)
            ref_full = rdims is not None and all(d is not None for d in rdims)
            if ref_full:
                st.compared += 1
            problems = []
            if rdt and ours_dt != "undefined" and rdt != ours_dt:
                problems.append("dtype")
            if rdims is not None and ours_dims is not None:
                if len(rdims) != len(ours_dims):
                    problems.append("rank")
                elif any(a is not None and b is not None and a != b for a, b in zip(rdims, ours_dims)):
                    problems.append("dims")
                elif ref_full and not ours_full:
                    problems.append("missing")
            elif ref_full and ours_dims is None:
                problems.append("missing")
            if rdt and ours_dt == "undefined":
                problems.append("missing dtype")
            if problems:
                st.mismatch.append(f"{label} -> {o['name']}: ours {fmt(ours_dt, ours_dims)}"
                                   f"{' (estimated)' if o.get('estimated') else ''} vs onnx {fmt(rdt, rdims)}"
                                   f" [{', '.join(problems)}]")
            elif not ours_full:
                msg = f"{label} -> {o['name']}: ours {fmt(ours_dt, ours_dims)}, onnx {fmt(rdt, rdims)}"
                st.unknown.append(msg)
                if not ref_full:
                    st.neither.append(msg)

    walk_nodes(doc.get("nodes", []), (), visit)
    for o in doc["model"]["outputs"]:
        inf = o.get("inferred", {})
        dims = inf.get("shape")
        if dims is None or any(d is None for d in dims):
            st.bad_outputs.append(f"output {o['name']}: {fmt(inf.get('dtype'), dims)}")
    return st


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", default=DEFAULT_CLI)
    ap.add_argument("--cache", default="/tmp/perfcard_shape_cache")
    ap.add_argument("--fresh", action="store_true", help="re-export even when cached")
    ap.add_argument("--opsets", default=",".join(map(str, OPSETS)))
    ap.add_argument("--only", default="", help="comma-separated substrings of model names")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--no-runtime", action="store_true",
                    help="skip the eager torch run that checks the graph outputs")
    ap.add_argument("-v", "--verbose", action="count", default=0,
                    help="-v: list mismatches, unknown ops and unknown values; -vv: also values neither knows")
    ap.add_argument("--max-lines", type=int, default=25)
    args = ap.parse_args()

    import torch
    torch.set_num_threads(1)
    models = coverage_set()
    if args.list:
        print("\n".join(models))
        return 0
    want = [w for w in args.only.split(",") if w]
    names = [n for n in models if not want or any(w in n for w in want)]
    opsets = [int(x) for x in args.opsets.split(",")]
    os.makedirs(args.cache, exist_ok=True)
    if not os.path.exists(args.cli):
        print(f"check_shapes: {args.cli} not found; build with cmake first", file=sys.stderr)
        return 2

    rows = []
    failed = False
    for name in names:
        kind, maker = models[name]
        for opset in opsets:
            path = os.path.join(args.cache, f"{name}_op{opset}.onnx")
            label = f"{name}@{opset}"
            st = Stats()
            try:
                if args.fresh or not os.path.exists(path):
                    t0 = time.time()
                    export(name, kind, maker, opset, path)
                    print(f"exported {label} in {time.time() - t0:.1f}s", file=sys.stderr)
                ref, _ = reference_shapes(path)
                with tempfile.TemporaryDirectory() as td:
                    doc = run_cli(args.cli, without_output_shapes(path, td))
                st = compare(doc, ref)
                if not args.no_runtime:
                    actual = runtime_shapes(name, kind, maker, os.path.join(args.cache, f"{name}.runtime.json"))
                    if actual is not None:
                        compare_runtime(doc, actual, st)
            except Exception as e:  # an export failure or a CLI error is a failure of the row
                st.error = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"[:300]
                if args.verbose > 1:
                    traceback.print_exc()
            rows.append((label, st))
            bad = bool(st.error or st.mismatch or st.unknown_ops or st.not_inferred)
            failed |= bad
            if args.verbose and (bad or st.unknown or st.bad_outputs):
                print(f"== {label}")
                if st.error:
                    print(f"   ERROR {st.error}")
                for title, items in (("mismatch", st.mismatch), ("unknown op", st.unknown_ops),
                                     ("not inferred", st.not_inferred), ("output", st.bad_outputs),
                                     ("unknown (neither)" if args.verbose < 2 else "unknown", st.neither if args.verbose < 2 else st.unknown)):
                    for line in items[: args.max_lines]:
                        print(f"   {title}: {line}")
                    if len(items) > args.max_lines:
                        print(f"   {title}: ... {len(items) - args.max_lines} more")
            sys.stdout.flush()

    hdr = f"{'model@opset':46} {'nodes':>6} {'compared':>8} {'mismatch':>8} {'unk.vals':>8} {'neither':>7} {'unk.ops':>7} {'!infer':>6} {'est.':>5} {'out?':>4} {'eager':>5}"
    print()
    print(hdr)
    print("-" * len(hdr))
    for label, st in rows:
        if st.error:
            print(f"{label:46} ERROR {st.error}")
            continue
        print(f"{label:46} {st.nodes:6d} {st.compared:8d} {len(st.mismatch):8d} {len(st.unknown):8d} "
              f"{len(st.neither):7d} {len(st.unknown_ops):7d} {len(st.not_inferred):6d} {st.estimated:5d} "
              f"{len(st.bad_outputs):4d} {st.runtime_compared:5d}")
    tot = lambda f: sum(f(st) for _, st in rows if not st.error)
    print("-" * len(hdr))
    print(f"{'total (' + str(len(rows)) + ' graphs)':46} {tot(lambda s: s.nodes):6d} {tot(lambda s: s.compared):8d} "
          f"{tot(lambda s: len(s.mismatch)):8d} {tot(lambda s: len(s.unknown)):8d} {tot(lambda s: len(s.neither)):7d} "
          f"{tot(lambda s: len(s.unknown_ops)):7d} {tot(lambda s: len(s.not_inferred)):6d} {tot(lambda s: s.estimated):5d} "
          f"{tot(lambda s: len(s.bad_outputs)):4d} {tot(lambda s: s.runtime_compared):5d}")
    errors = sum(1 for _, st in rows if st.error)
    if errors:
        print(f"{errors} graph(s) failed to export or analyze")
    print("columns: compared = values whose full shape onnx knows; mismatch = onnx knows a dim/rank/dtype and we "
          "disagree or miss it; unk.vals = values with dims we do not know; neither = unknown to both; "
          "!infer = nodes whose shape_status is not 'inferred'; est. = data-dependent upper bounds; "
          "out? = graph outputs with unknown dims; eager = graph outputs checked against the torch module run "
          "eagerly at the bound sizes (equal, or at most the upper bound where estimated)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
