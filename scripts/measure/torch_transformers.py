"""PyTorch modules of the zoo's transformer graphs, built from the same configs (scripts/zoo/transformers.py),
for timing them on a GPU (scripts/measure/gpu_campaign.py).

Each module is the network its graph describes, parameter for parameter (the campaign checks the count
against the manifest): GPT-2 and OPT (fused or separate q/k/v, pre- or post-LN, learned positions with
OPT's offset, project_in/out around a narrower embedding, the tied head), the Llama family (grouped KV
heads, Qwen2's q/k/v bias, Qwen3's per-head q/k norms, an explicit head size as Mistral-Nemo's, a tied or
separate head) and the ViT encoder; decode steps take one new token over a KV cache passed as inputs
(past key and value per layer) and return the new cache, as the graphs do. Attention is the graph's own
arithmetic (q k^T / sqrt(d), mask, softmax, v) in the activations' precision, not a fused kernel, so a row
times what the graph describes.
"""
from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

ACTS = {"gelu": F.gelu, "gelu_new": lambda x: F.gelu(x, approximate="tanh"), "relu": F.relu}


def attend(q, k, v, past_len=None):
    """softmax(q k^T / sqrt(d)) v; q, k, v: [b, h, s, d]; causal over absolute positions when the queries
    start at `past_len` (None: every query sees every key, as in an encoder)."""
    w = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(q.shape[-1])
    if past_len is not None:
        q_pos = torch.arange(past_len, past_len + q.shape[2], device=q.device)
        k_pos = torch.arange(0, k.shape[2], device=q.device)
        w = w.masked_fill(~(k_pos[None, :] <= q_pos[:, None])[None, None], float("-inf"))
    return torch.matmul(F.softmax(w, dim=-1), v)


def heads(x, n, d):
    b, s, _ = x.shape
    return x.view(b, s, n, d).transpose(1, 2)


def merge(x):
    b, n, s, d = x.shape
    return x.transpose(1, 2).reshape(b, s, n * d)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.weight, self.eps = nn.Parameter(torch.ones(dim)), eps

    def forward(self, x):
        return self.weight * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


class GPTBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = c["hidden"]
        self.c, self.nh, self.d = c, c["heads"], h // c["heads"]
        self.ln1, self.ln2 = nn.LayerNorm(h, eps=c["eps"]), nn.LayerNorm(h, eps=c["eps"])
        if c.get("fused_qkv", False):
            self.c_attn = nn.Linear(h, 3 * h)
        else:
            self.q, self.k, self.v = nn.Linear(h, h), nn.Linear(h, h), nn.Linear(h, h)
        self.attn_out = nn.Linear(h, h)
        self.fc1, self.fc2 = nn.Linear(h, c["inter"]), nn.Linear(c["inter"], h)
        self.act = ACTS[c["act"]]

    def forward(self, x, past_k=None, past_v=None):
        pre = self.c.get("pre_ln", True)
        r = self.ln1(x) if pre else x
        if self.c.get("fused_qkv", False):
            q, k, v = self.c_attn(r).split(x.shape[-1], dim=2)
        else:
            q, k, v = self.q(r), self.k(r), self.v(r)
        q, k, v = heads(q, self.nh, self.d), heads(k, self.nh, self.d), heads(v, self.nh, self.d)
        past_len = 0
        if past_k is not None:
            past_len = past_k.shape[2]
            k, v = torch.cat([past_k, k], dim=2), torch.cat([past_v, v], dim=2)
        x = x + self.attn_out(merge(attend(q, k, v, past_len)))
        if not pre:
            x = self.ln1(x)
        r = self.ln2(x) if pre else x
        x = x + self.fc2(self.act(self.fc1(r)))
        if not pre:
            x = self.ln2(x)
        return x, (k, v)


class GPT(nn.Module):
    """GPT-2 and OPT (scripts/zoo/transformers.py build_gpt)."""

    def __init__(self, c):
        super().__init__()
        h, emb = c["hidden"], c.get("embed_dim", c["hidden"])
        self.c = c
        self.wte = nn.Embedding(c["vocab"], emb)
        self.wpe = nn.Embedding(c["max_pos"] + c.get("position_offset", 0), h)
        self.project_in = nn.Linear(emb, h, bias=False) if emb != h else None
        self.project_out = nn.Linear(h, emb, bias=False) if emb != h else None
        self.blocks = nn.ModuleList([GPTBlock(c) for _ in range(c["layers"])])
        self.ln_f = nn.LayerNorm(h, eps=c["eps"]) if c.get("pre_ln", True) else None

    def forward(self, ids, *past):
        past_len = past[0].shape[2] if past else 0
        x = self.wte(ids)
        if self.project_in is not None:
            x = self.project_in(x)
        pos = torch.arange(past_len, past_len + ids.shape[1], device=ids.device) + self.c.get("position_offset", 0)
        x = x + self.wpe(pos)[None]
        present = []
        for i, blk in enumerate(self.blocks):
            x, kv = blk(x, *(past[2 * i:2 * i + 2] if past else ()))
            present += kv
        if self.ln_f is not None:
            x = self.ln_f(x)
        if self.project_out is not None:
            x = self.project_out(x)
        return (x @ self.wte.weight.t(), *present)


class LlamaBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, nh, kvh = c["hidden"], c["heads"], c["kv_heads"]
        hd = c.get("head_dim", h // nh)
        bias = c.get("qkv_bias", False)
        self.nh, self.kvh, self.hd, self.theta = nh, kvh, hd, c["theta"]
        self.input_norm, self.post_attention_norm = RMSNorm(h, c["eps"]), RMSNorm(h, c["eps"])
        self.q_proj, self.k_proj = nn.Linear(h, nh * hd, bias=bias), nn.Linear(h, kvh * hd, bias=bias)
        self.v_proj, self.o_proj = nn.Linear(h, kvh * hd, bias=bias), nn.Linear(nh * hd, h, bias=False)
        self.q_norm = RMSNorm(hd, c["eps"]) if c.get("qk_norm", False) else None
        self.k_norm = RMSNorm(hd, c["eps"]) if c.get("qk_norm", False) else None
        self.gate_proj, self.up_proj = nn.Linear(h, c["inter"], bias=False), nn.Linear(h, c["inter"], bias=False)
        self.down_proj = nn.Linear(c["inter"], h, bias=False)

    def rope(self, x, past_len):
        s, hd = x.shape[2], self.hd
        # In-graph tables, as the graph computes them (no buffer): theta^(-2i/d) over this step's positions.
        inv = 1.0 / (self.theta ** (torch.arange(0, hd, 2, device=x.device, dtype=torch.float32) / hd))
        t = torch.arange(past_len, past_len + s, device=x.device, dtype=torch.float32)
        emb = torch.cat([torch.outer(t, inv)] * 2, dim=-1)
        cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
        x1, x2 = x[..., :hd // 2], x[..., hd // 2:]
        return x * cos + torch.cat([-x2, x1], dim=-1) * sin

    def forward(self, x, past_k=None, past_v=None):
        r = self.input_norm(x)
        q, k = heads(self.q_proj(r), self.nh, self.hd), heads(self.k_proj(r), self.kvh, self.hd)
        v = heads(self.v_proj(r), self.kvh, self.hd)
        if self.q_norm is not None:
            q, k = self.q_norm(q), self.k_norm(k)
        past_len = past_k.shape[2] if past_k is not None else 0
        q, k = self.rope(q, past_len), self.rope(k, past_len)
        if past_k is not None:
            k, v = torch.cat([past_k, k], dim=2), torch.cat([past_v, v], dim=2)
        rep = self.nh // self.kvh
        kk = k.repeat_interleave(rep, dim=1) if rep > 1 else k
        vv = v.repeat_interleave(rep, dim=1) if rep > 1 else v
        x = x + self.o_proj(merge(attend(q, kk, vv, past_len)))
        r = self.post_attention_norm(x)
        x = x + self.down_proj(F.silu(self.gate_proj(r)) * self.up_proj(r))
        return x, (k, v)


class Llama(nn.Module):
    """The Llama family (scripts/zoo/transformers.py build_llama)."""

    def __init__(self, c):
        super().__init__()
        self.embed = nn.Embedding(c["vocab"], c["hidden"])
        self.layers = nn.ModuleList([LlamaBlock(c) for _ in range(c["layers"])])
        self.norm = RMSNorm(c["hidden"], c["eps"])
        self.lm_head = None if c.get("tie", False) else nn.Linear(c["hidden"], c["vocab"], bias=False)

    def forward(self, ids, *past):
        x = self.embed(ids)
        present = []
        for i, layer in enumerate(self.layers):
            x, kv = layer(x, *(past[2 * i:2 * i + 2] if past else ()))
            present += kv
        x = self.norm(x)
        logits = self.lm_head(x) if self.lm_head is not None else x @ self.embed.weight.t()
        return (logits, *present)


class ViTBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = c["hidden"]
        self.nh, self.d = c["heads"], h // c["heads"]
        self.ln1, self.ln2 = nn.LayerNorm(h, eps=c["eps"]), nn.LayerNorm(h, eps=c["eps"])
        self.qkv, self.out_proj = nn.Linear(h, 3 * h), nn.Linear(h, h)
        self.mlp1, self.mlp2 = nn.Linear(h, c["inter"]), nn.Linear(c["inter"], h)

    def forward(self, x):
        q, k, v = self.qkv(self.ln1(x)).split(x.shape[-1], dim=2)
        q, k, v = heads(q, self.nh, self.d), heads(k, self.nh, self.d), heads(v, self.nh, self.d)
        x = x + self.out_proj(merge(attend(q, k, v)))
        return x + self.mlp2(F.gelu(self.mlp1(self.ln2(x))))


class ViT(nn.Module):
    """The ViT encoder (scripts/zoo/transformers.py build_vit)."""

    def __init__(self, c):
        super().__init__()
        h, p = c["hidden"], c["patch"]
        n = (c["image"] // p) ** 2
        self.conv_proj = nn.Conv2d(3, h, p, stride=p)
        self.class_token = nn.Parameter(torch.zeros(1, 1, h))
        self.pos_embedding = nn.Parameter(torch.zeros(1, n + 1, h))
        self.blocks = nn.ModuleList([ViTBlock(c) for _ in range(c["layers"])])
        self.ln = nn.LayerNorm(h, eps=c["eps"])
        self.head = nn.Linear(h, c["classes"])

    def forward(self, pixels):
        x = self.conv_proj(pixels).flatten(2).transpose(1, 2)
        x = torch.cat([self.class_token.expand(x.shape[0], -1, -1), x], dim=1) + self.pos_embedding
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln(x)[:, 0])


def build(cfg):
    """(module, inputs(c, device, dtype)) for a zoo transformer config; c is the campaign's Config (batch,
    sequence, past_sequence)."""
    arch, step = cfg["arch"], cfg.get("step")
    if arch == "vit":
        model = ViT(cfg)

        def inputs(c, device, dtype):
            return (torch.randn(c.batch, 3, cfg["image"], cfg["image"], device=device, dtype=dtype),)
        return model, inputs
    if arch == "gpt":
        model = GPT(cfg)
        kvh, hd = cfg["heads"], cfg["hidden"] // cfg["heads"]
    elif arch == "llama":
        model = Llama(cfg)
        kvh, hd = cfg["kv_heads"], cfg.get("head_dim", cfg["hidden"] // cfg["heads"])
    else:
        raise ValueError(f"no torch module for arch {arch!r} here")

    def inputs(c, device, dtype):
        ids = torch.randint(0, cfg["vocab"], (c.batch, c.sequence), device=device)
        past = [torch.randn(c.batch, kvh, c.past_sequence, hd, device=device, dtype=dtype)
                for _ in range(2 * cfg["layers"])] if step == "decode" else []
        return (ids, *past)
    return model, inputs
