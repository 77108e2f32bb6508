"""The core's per-node cost formulas (core/src/cost.cpp + core/src/ops/*.cpp) for the op types the per-op
table needs, so a measured kernel can be keyed exactly like `perfcard analyze --per-node` describes a node.
scripts/data/test_tables.py checks these against the CLI on one-node graphs built with onnx.helper.

  bytes_read     sum of input bytes, initializers included (not for view/metadata classes)
  bytes_written  sum of output bytes
  params         elements of float/int8 initializer inputs (BatchNormalization's stats excluded)
  macs / flops   by the registry's cost rule and FLOP constant (scripts/data/graph_features.registry())
"""
from __future__ import annotations

from dataclasses import dataclass, field
from math import prod

from .graph_features import registry_row

DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "int64": 8, "int32": 4, "int8": 1, "uint8": 1, "bool": 1}
PARAM_DTYPES = {"float32", "float16", "bfloat16", "float64", "int8", "uint8"}


@dataclass
class Tensor:
    shape: list[int]
    dtype: str = "float32"
    initializer: bool = False

    @property
    def elements(self) -> int:
        return prod(self.shape)

    @property
    def bytes(self) -> int:
        return self.elements * DTYPE_BYTES[self.dtype]


@dataclass
class Node:
    op_type: str
    inputs: list[Tensor]
    outputs: list[Tensor]
    domain: str = ""
    attrs: dict = field(default_factory=dict)


def cost(n: Node) -> dict:
    row = registry_row(n.op_type, n.domain)
    cls = row["class"]
    moves = cls not in ("view", "metadata")
    out = {"op_class": cls, "macs": 0.0, "flops": 0.0,
           "bytes_read": float(sum(t.bytes for t in n.inputs)) if moves else 0.0,
           "bytes_written": float(sum(t.bytes for t in n.outputs)) if moves else 0.0,
           "params": float(sum(t.elements for t in n.inputs if t.initializer and t.dtype in PARAM_DTYPES))}
    rule, k = row["cost"], row["k"]
    y = n.outputs[0]
    if rule == "cost_matmul":
        a = n.inputs[0]
        if n.op_type == "Gemm":
            kdim = a.shape[0 if n.attrs.get("transA", 0) else 1]
        else:
            kdim = a.shape[-1]
        out["macs"] = float(y.elements) * kdim
        out["flops"] = 2 * out["macs"] + (float(y.elements) if n.op_type == "Gemm" and len(n.inputs) > 2 else 0.0)
    elif rule == "cost_per_output":
        out["flops"] = k * max(float(t.elements) for t in n.outputs)
    elif rule in ("cost_per_input", "cost_reduce", "cost_global_pool"):
        out["flops"] = k * float(n.inputs[0].elements)
    elif rule == "cost_indexed_read":
        # the data input moves only the elements it is indexed at: one per output element (the core's
        # cost_indexed_read; this file goes when the tables take their costs from `perfcard features`)
        d = n.inputs[0]
        if d.elements:
            out["bytes_read"] += min(float(y.elements), float(d.elements)) * d.bytes / d.elements - d.bytes
    elif rule == "cost_none":
        pass
    else:
        raise NotImplementedError(f"node_cost: {n.op_type} uses {rule}, not mirrored here")
    return out
