"""Independent MAC / activation counting on the PyTorch side, for cross-checking PerfCard.

Counts at the ATen dispatch level (TorchDispatchMode): every convolution and matrix product that
actually runs, as multiply-accumulates, the way torchvision's published "GFLOPS" (the `_ops` weights
meta field) and fvcore's FlopCountAnalysis count them. Activations are the output elements of those
same ops (fvcore's ActivationCountAnalysis, which is timm's `macts`).

Nothing here reads an ONNX file or uses PerfCard: it is a second opinion, not a copy of the tool.

The model runs with autograd enabled so that nn.MultiheadAttention takes its decomposed path
(linear + bmm) rather than the fused inference kernel, which dispatch would see as one opaque op.
"""
from __future__ import annotations

import math

import torch
from torch.utils._python_dispatch import TorchDispatchMode

aten = torch.ops.aten


def _numel(shape) -> int:
    return int(math.prod(shape))


def _conv(args, out):
    w = args[1]
    transposed = bool(args[6]) if len(args) > 6 else False
    if transposed:  # every input element scatters into Cout/groups * prod(kernel) outputs
        x = args[0]
        return _numel(x.shape) * _numel(w.shape[1:])
    return _numel(out.shape) * _numel(w.shape[1:])


def _mm(args, out):  # (n,k) @ (k,m)
    return _numel(out.shape) * args[0].shape[-1]


def _addmm(args, out):  # bias + (n,k) @ (k,m)
    return _numel(out.shape) * args[1].shape[-1]


def _bmm(args, out):
    return _numel(out.shape) * args[0].shape[-1]


def _baddbmm(args, out):
    return _numel(out.shape) * args[1].shape[-1]


_RULES = {
    aten.convolution.default: _conv,
    aten._convolution.default: _conv,
    aten.mm.default: _mm,
    aten.addmm.default: _addmm,
    aten.bmm.default: _bmm,
    aten.baddbmm.default: _baddbmm,
}


class CountMode(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.macs = 0
        self.activations = 0
        self.by_op = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        rule = _RULES.get(func)
        if rule is None:
            packet = getattr(func, "overloadpacket", None)
            if packet in (aten.matmul, aten.einsum):  # composite ops normally decompose before dispatch
                raise RuntimeError(f"unexpected undecomposed {func}")
            return out
        m = rule(args, out)
        self.macs += m
        self.activations += out.numel()
        name = str(func.overloadpacket.__name__)
        self.by_op[name] = self.by_op.get(name, 0) + m
        return out


def count(model: torch.nn.Module, *inputs, grad: bool = True) -> dict:
    """MACs and activations of one forward pass of `model` on `inputs` (batch as given).
    grad=False is faster and fine for models without nn.MultiheadAttention."""
    with torch.set_grad_enabled(grad):
        with CountMode() as mode:
            model(*inputs)
    return {"macs": mode.macs, "activations": mode.activations, "by_op": mode.by_op}


def num_params(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())
