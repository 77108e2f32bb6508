"""Per-node costs for nodes that exist only as descriptions (a measured kernel in NeuSight or Vidur), by the core.

The tables key a measured kernel the way `perfcard analyze --per-node` describes a node. Rather than keep a
Python copy of the core's cost rules, the nodes are written into ONNX graphs (one node per distinct
description, each with its own inputs) and the core costs them. Weight initializers are external data that
no file backs: the core costs a tensor from its dims and type and loads without the payload (onnx_loader.h),
so a 8192x8192 projection costs a few bytes of graph, not 256 MiB.

The core's inferred output shape is checked against the one the description states: a mismatch means the
description is not the node it claims to be, and is an error rather than a row keyed to the wrong node.
"""
from __future__ import annotations

import json
import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from math import prod

ONNX_DTYPE_NAMES = {"float32": "FLOAT", "float16": "FLOAT16", "bfloat16": "BFLOAT16", "int64": "INT64",
                    "int32": "INT32", "int8": "INT8", "uint8": "UINT8", "bool": "BOOL"}
COST_KEYS = ("macs", "flops", "bytes_read", "bytes_written", "params")
# One opset for every graph: new enough for Gelu (20) and LayerNormalization (17).
OPSET = 20
CHUNK = 4096  # nodes per graph: keeps one analyze document to tens of MB


@dataclass
class Tensor:
    shape: list[int]
    dtype: str = "float32"
    initializer: bool = False

    @property
    def elements(self) -> int:
        return prod(self.shape)


@dataclass
class Node:
    op_type: str
    inputs: list[Tensor]
    outputs: list[Tensor]
    domain: str = ""
    attrs: dict = field(default_factory=dict)

    def key(self) -> str:
        return json.dumps([self.domain, self.op_type, [[t.shape, t.dtype, t.initializer] for t in self.inputs],
                           [[t.shape, t.dtype] for t in self.outputs], sorted(self.attrs.items())])


def graph_of(nodes: list[Node], opset: int = OPSET, external: bool = True):
    """One ONNX model holding the nodes side by side; node i reads n{i}_in{j} and writes n{i}_out{j}.
    external: initializers as unbacked external data (else zeros inline, for small checks)."""
    import numpy as np
    from onnx import TensorProto, helper, mapping

    inputs, outputs, inits, onnx_nodes, domains = [], [], [], [], set()
    for i, node in enumerate(nodes):
        names = []
        for j, t in enumerate(node.inputs):
            name = f"n{i}_in{j}"
            names.append(name)
            dt = getattr(TensorProto, ONNX_DTYPE_NAMES[t.dtype])
            if not t.initializer:
                inputs.append(helper.make_tensor_value_info(name, dt, t.shape))
            elif external:
                w = TensorProto(name=name, data_type=dt, dims=t.shape, data_location=TensorProto.EXTERNAL)
                loc = w.external_data.add()
                loc.key, loc.value = "location", "unbacked.bin"
                inits.append(w)
            else:
                zeros = np.zeros(t.shape, dtype=mapping.TENSOR_TYPE_TO_NP_TYPE[dt])
                inits.append(helper.make_tensor(name, dt, t.shape, zeros.tobytes(), raw=True))
        outs = [f"n{i}_out{j}" for j in range(len(node.outputs))]
        for name, t in zip(outs, node.outputs):
            outputs.append(helper.make_tensor_value_info(name, getattr(TensorProto, ONNX_DTYPE_NAMES[t.dtype]),
                                                         t.shape))
        onnx_nodes.append(helper.make_node(node.op_type, names, outs, name=f"n{i}", domain=node.domain,
                                           **node.attrs))
        if node.domain:
            domains.add(node.domain)
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, 1) for d in sorted(domains)]
    return helper.make_model(helper.make_graph(onnx_nodes, "described_nodes", inputs, outputs, inits),
                             opset_imports=opsets)


def _analyze(model, binary: str) -> list[dict]:
    with tempfile.TemporaryDirectory(prefix="perfcard-nodes-") as tmp:
        path = os.path.join(tmp, "nodes.onnx")
        with open(path, "wb") as f:
            f.write(model.SerializeToString())
        r = subprocess.run([binary, "analyze", path, "--json", "--per-node"], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"perfcard analyze of described nodes failed: {r.stderr.strip()}")
    return json.loads(r.stdout)["nodes"]


def _checked(node: Node, got: dict) -> dict:
    where = f"{node.domain + '::' if node.domain else ''}{node.op_type} {[t.shape for t in node.inputs]}"
    if not got.get("cost_known", False) or got.get("shape_status") != "inferred":
        raise ValueError(f"the core cannot cost {where}: shape {got.get('shape_status')}, "
                         f"cost_known {got.get('cost_known')}")
    shape = (got.get("outputs") or [{}])[0].get("shape")
    if shape != node.outputs[0].shape:
        raise ValueError(f"{where}: the core infers output {shape}, the description says {node.outputs[0].shape}")
    return {"op_class": got["class"], **{k: float(got.get(k) or 0.0) for k in COST_KEYS}}


def cost_nodes(nodes: list[Node], binary: str, chunk: int = CHUNK) -> list[dict]:
    """The core's class, MACs, FLOPs, bytes and params for each node (equal descriptions costed once)."""
    distinct: dict[str, int] = {}
    order: list[Node] = []
    for n in nodes:
        if distinct.setdefault(n.key(), len(order)) == len(order):
            order.append(n)
    costs: list[dict] = []
    for lo in range(0, len(order), chunk):
        part = order[lo:lo + chunk]
        got = _analyze(graph_of(part), binary)
        if len(got) != len(part):
            raise RuntimeError(f"perfcard analyze returned {len(got)} nodes for {len(part)}")
        costs += [_checked(n, g) for n, g in zip(part, got)]
    return [costs[distinct[n.key()]] for n in nodes]
