"""A BERT encoder written from its configuration in plain torch (no external model code), for the zoo.

Architecture (Devlin et al. 2018, "BERT-base"): word + position + token-type embeddings, an embeddings
LayerNorm, N post-LN transformer layers (self-attention with biases, GELU feed-forward) and a pooler
(dense + tanh over the first token). Dropout is omitted (inference graph).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class BertConfig:
    vocab_size: int = 30522
    hidden: int = 768
    layers: int = 12
    heads: int = 12
    intermediate: int = 3072
    max_position: int = 512
    type_vocab: int = 2
    eps: float = 1e-12

    def expected_params(self) -> int:
        """Parameter count from the configuration alone (independent of the module code)."""
        h, i = self.hidden, self.intermediate
        emb = (self.vocab_size + self.max_position + self.type_vocab) * h + 2 * h
        attn = 4 * (h * h + h) + 2 * h
        ffn = (h * i + i) + (i * h + h) + 2 * h
        pooler = h * h + h
        return emb + self.layers * (attn + ffn) + pooler

    def expected_macs(self, batch: int, seq: int) -> int:
        """Multiply-accumulates of the matrix products (projections, QK^T, AV, FFN, pooler)."""
        h, i = self.hidden, self.intermediate
        per_layer = 4 * seq * h * h + 2 * seq * seq * h + 2 * seq * h * i
        return batch * (self.layers * per_layer + h * h)

    def expected_activations(self, batch: int, seq: int) -> int:
        """Output elements of those products (timm/fvcore 'activations')."""
        h, i, a = self.hidden, self.intermediate, self.heads
        per_layer = 4 * seq * h + a * seq * seq + seq * h + seq * i + seq * h
        return batch * (self.layers * per_layer + h)


BERT_BASE = BertConfig()
BERT_TINY = BertConfig(hidden=128, layers=2, heads=2, intermediate=512)


class SelfAttention(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.heads, self.head_dim = c.heads, c.hidden // c.heads
        self.query = nn.Linear(c.hidden, c.hidden)
        self.key = nn.Linear(c.hidden, c.hidden)
        self.value = nn.Linear(c.hidden, c.hidden)
        self.out = nn.Linear(c.hidden, c.hidden)
        self.norm = nn.LayerNorm(c.hidden, eps=c.eps)

    def split(self, x: torch.Tensor) -> torch.Tensor:  # [B, S, H] -> [B, heads, S, d]
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x: torch.Tensor, mask_bias: torch.Tensor) -> torch.Tensor:
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim) + mask_bias
        ctx = torch.matmul(scores.softmax(dim=-1), v)
        b, _, s, _ = ctx.shape
        ctx = ctx.transpose(1, 2).reshape(b, s, self.heads * self.head_dim)
        return self.norm(x + self.out(ctx))


class Layer(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.attention = SelfAttention(c)
        self.up = nn.Linear(c.hidden, c.intermediate)
        self.down = nn.Linear(c.intermediate, c.hidden)
        self.norm = nn.LayerNorm(c.hidden, eps=c.eps)

    def forward(self, x: torch.Tensor, mask_bias: torch.Tensor) -> torch.Tensor:
        x = self.attention(x, mask_bias)
        return self.norm(x + self.down(nn.functional.gelu(self.up(x))))


class Bert(nn.Module):
    def __init__(self, c: BertConfig):
        super().__init__()
        self.word = nn.Embedding(c.vocab_size, c.hidden)
        self.position = nn.Embedding(c.max_position, c.hidden)
        self.token_type = nn.Embedding(c.type_vocab, c.hidden)
        self.emb_norm = nn.LayerNorm(c.hidden, eps=c.eps)
        self.layers = nn.ModuleList([Layer(c) for _ in range(c.layers)])
        self.pooler = nn.Linear(c.hidden, c.hidden)
        self.register_buffer("position_ids", torch.arange(c.max_position).unsqueeze(0), persistent=False)

    def forward(self, input_ids, token_type_ids, attention_mask):
        seq = input_ids.shape[1]
        pos = self.position_ids[:, :seq]
        x = self.word(input_ids) + self.position(pos) + self.token_type(token_type_ids)
        x = self.emb_norm(x)
        # [B, S] {0,1} -> additive bias [B, 1, 1, S]
        mask_bias = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        for layer in self.layers:
            x = layer(x, mask_bias)
        pooled = torch.tanh(self.pooler(x[:, 0]))
        return x, pooled
