"""NAS-Bench-201 networks, built from the architecture strings of HELP's latency table, for the zoo.

    nice -n 19 /usr/bin/python3 -m scripts.zoo.nasbench201 [--limit N] [--only 0,1,2] [--no-analyze]
        [--zeros computed|dropped]

Every architecture string of `../shared/data/public/help_latency_long.csv.gz` (search_space
nasbench201, 15,625 cells) becomes a graph-only ONNX file scripts/zoo/out/nasbench201/nb201_<arch
index, 5 digits>.onnx, written directly with onnx.helper (no torch: the whole space builds in a
couple of minutes), and a line of the committed manifest scripts/zoo/manifests/nasbench201.jsonl.

The macro skeleton is NAS-Bench-201's: stem conv3x3 (16 ch) + BN; three stages of N=5 cells at
C=16, 32, 64 with a residual reduction block between stages (ReLU-conv3x3/s2-BN, ReLU-conv3x3-BN,
shortcut avgpool2x2/s2 + conv1x1); BN + ReLU, global average pool, linear classifier.

Input: CIFAR-100, 32x32, 100 classes. HELP's README and code do not state the dataset of its
NB201 latencies; the architectures it reports for its latency-constrained NAS on those same device
keys come with accuracies of 67-73.5%, which is NAS-Bench-201's CIFAR-100 range (CIFAR-10 is ~94%,
ImageNet16-120 below 48%), so CIFAR-100 is what HELP deploys. The choice is recorded in each line's
config ("dataset"); `--dataset` builds the other two inputs if that inference ever proves wrong.

Cell semantics (`zeros="computed"`, the default): NAS-Bench-201's own code, which is what HELP timed. Node j
(1..3) sums op(i->j) over every i<j as Python's sum() does, from 0: `0 + first` is an Add of its own, then one
Add per further edge; `none` is NB201's Zero op, a Mul of its input by 0 on every such edge; `skip_connect`
passes the tensor on; nor_conv_kxk is ReLU-Conv-BN; avg_pool_3x3 is stride 1, pad 1 and excludes padding from
the average (count_include_pad=False, as NB201's pooling op). Every edge runs, whether or not its node reaches
the output. HELP's own labels say so too: per edge, `none` costs a kernel over `skip_connect`, as much as
the pooling op (scripts/training/help_ceiling.py, in docs/accuracy.md).

`zeros="dropped"` builds what this project measured until 2026-11-28 (DROPPED_UNTIL: the CPU and browser
campaigns ran these graphs, the GPU campaign a torch twin of them): a `none` edge is left out, a node sums its other edges without the leading 0, and a node whose
every input is `none` is Mul(cell input, 0) only where something consumes it. Those graphs go to
`out/nasbench201_dropped/` (ids nb201d_<index>) with their own manifest, nasbench201_dropped.jsonl.

Duplicates: `canonical_key` is the cell up to isomorphism: edges out of all-zero nodes and edges into
nodes that never reach the output are dropped, and the two intermediate nodes are swapped where no
edge joins them, the smaller edge listing wins. Each manifest line carries `canonical_key` and
`canonical_id` (the smallest arch index with that key). Two cells of one key compute the same function,
not the same work: every edge still runs.

Analysis: one `perfcard analyze --json --dim batch=1` per distinct structure_hash (graphs identical
up to names share the result), in this one process under nice.
"""
from __future__ import annotations

import argparse
import csv
import gzip
import os
import sys
import time

import onnx
from onnx import TensorProto, helper

from scripts import paths
from scripts.zoo import graph_only, manifest

HELP_CSV = paths.shared("help_latency_long.csv.gz")
GENERATOR = "nasbench201"
OPSET = 13
OPS = ("none", "skip_connect", "nor_conv_1x1", "nor_conv_3x3", "avg_pool_3x3")
ZEROS = ("computed", "dropped")  # how a `none` edge runs: see the module's docstring
DATASETS = {"cifar10": (32, 10), "cifar100": (32, 100), "ImageNet16-120": (16, 120)}
STAGE_CHANNELS = (16, 32, 64)
CELLS_PER_STAGE = 5
BN_EPS = 1e-5


def parse_arch(arch: str) -> list[tuple[int, int, str]]:
    """'|op~0|+|op~0|op~1|+|op~0|op~1|op~2|' -> [(src, dst, op)] for the 6 edges, in string order."""
    nodes = arch.strip("|").split("|+|")
    if len(nodes) != 3:
        raise ValueError(f"not a NAS-Bench-201 cell (3 nodes expected): {arch!r}")
    edges = []
    for dst, node in enumerate(nodes, start=1):
        parts = node.split("|")
        if len(parts) != dst:
            raise ValueError(f"node {dst} of {arch!r} has {len(parts)} inputs, expected {dst}")
        for part in parts:
            op, src = part.split("~")
            if op not in OPS or not 0 <= int(src) < dst:
                raise ValueError(f"bad edge {part!r} in {arch!r}")
            edges.append((int(src), dst, op))
    return edges


def live_edges(edges: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """The edges that influence the output: from nodes carrying data, into nodes that reach node 3."""
    keep = [e for e in edges if e[2] != "none"]
    has_data = {0}
    for j in (1, 2, 3):
        if any(s in has_data for s, d, _ in keep if d == j):
            has_data.add(j)
    keep = [e for e in keep if e[0] in has_data]
    reaches = {3}
    for j in (2, 1):
        if any(d in reaches for s, d, _ in keep if s == j):
            reaches.add(j)
    return sorted(e for e in keep if e[1] in reaches)


def canonical_key(arch: str) -> str:
    """Same key <=> same cell up to relabeling of the intermediate nodes and dead edges."""
    edges = live_edges(parse_arch(arch))
    forms = [edges]
    if not any(s == 1 and d == 2 for s, d, _ in edges):
        swap = {0: 0, 1: 2, 2: 1, 3: 3}
        forms.append(sorted((swap[s], swap[d], op) for s, d, op in edges))
    best = min(forms)
    return ",".join(f"{s}>{d}:{op}" for s, d, op in best) or "zero"


class GraphBuilder:
    """Nodes and graph-only initializers (dims and dtype, data referenced externally and never kept)."""

    def __init__(self, data_name: str):
        self.nodes: list = []
        self.inits: list = []
        self.data_name = data_name
        self.offset = 0
        self.n = 0
        self._zero = None

    def name(self, stem: str) -> str:
        self.n += 1
        return f"{stem}_{self.n}"

    def weight(self, stem: str, dims: list[int]) -> str:
        t = TensorProto(name=self.name(stem), data_type=TensorProto.FLOAT, dims=dims)
        t.data_location = TensorProto.EXTERNAL
        length = 4
        for d in dims:
            length *= d
        for k, v in (("location", self.data_name), ("offset", str(self.offset)), ("length", str(length))):
            entry = t.external_data.add()
            entry.key, entry.value = k, v
        self.offset += length
        self.inits.append(t)
        return t.name

    def scalar(self, stem: str, value: float) -> str:
        # a Constant node, not an initializer: an initializer would count as a parameter
        out = self.name(stem)
        self.nodes.append(helper.make_node("Constant", [], [out], name=out,
                                           value=helper.make_tensor(out, TensorProto.FLOAT, [], [value])))
        return out

    def zero(self) -> str:
        """One scalar 0 for the whole graph (torch's scalar operand, not a tensor of its own)."""
        if self._zero is None:
            self._zero = self.scalar("zero", 0.0)
        return self._zero

    def op(self, op_type: str, inputs: list[str], **attrs) -> str:
        out = self.name(op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [out], name=out, **attrs))
        return out

    def conv(self, x: str, c_in: int, c_out: int, k: int, stride: int = 1, pad: int = 0) -> str:
        w = self.weight("conv_w", [c_out, c_in, k, k])
        return self.op("Conv", [x, w], kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4)

    def bn(self, x: str, c: int) -> str:
        params = [self.weight(f"bn_{p}", [c]) for p in ("scale", "bias", "mean", "var")]
        return self.op("BatchNormalization", [x] + params, epsilon=BN_EPS)

    def relu_conv_bn(self, x: str, c_in: int, c_out: int, k: int, stride: int, pad: int) -> str:
        return self.bn(self.conv(self.op("Relu", [x]), c_in, c_out, k, stride, pad), c_out)


def _op(g: GraphBuilder, op: str, src: str, c: int, zero: str | None = None) -> str:
    if op == "skip_connect":
        return src
    if op == "nor_conv_1x1":
        return g.relu_conv_bn(src, c, c, 1, 1, 0)
    if op == "nor_conv_3x3":
        return g.relu_conv_bn(src, c, c, 3, 1, 1)
    if op == "avg_pool_3x3":
        return g.op("AveragePool", [src], kernel_shape=[3, 3], strides=[1, 1], pads=[1, 1, 1, 1], count_include_pad=0)
    return g.op("Mul", [src, zero or g.scalar("zero", 0.0)])  # none: NB201's Zero op


def _cell(g: GraphBuilder, x: str, c: int, edges: list[tuple[int, int, str]], zeros: str) -> str:
    if zeros == "computed":
        values = {0: x}
        for j in (1, 2, 3):
            acc = None
            for s, d, op in edges:
                if d == j:
                    t = _op(g, op, values[s], c, g.zero())
                    acc = g.op("Add", [t, g.zero()]) if acc is None else g.op("Add", [acc, t])
            values[j] = acc
        return values[3]
    values = {0: x}
    for j in (1, 2, 3):
        terms = []
        for s, d, op in edges:
            if d != j or op == "none":
                continue
            src = values.get(s)
            if src is None:  # an all-zero node: materialize it the way NB201's Zero op does
                src = values[s] = g.op("Mul", [x, g.scalar("zero", 0.0)])
            terms.append(_op(g, op, src, c))
        if not terms:
            if j == 3:  # the cell still has to output a tensor
                values[3] = g.op("Mul", [x, g.scalar("zero", 0.0)])
            continue
        acc = terms[0]
        for t in terms[1:]:
            acc = g.op("Add", [acc, t])
        values[j] = acc
    return values[3]


def _reduction(g: GraphBuilder, x: str, c_in: int, c_out: int) -> str:
    a = g.relu_conv_bn(x, c_in, c_out, 3, 2, 1)
    b = g.relu_conv_bn(a, c_out, c_out, 3, 1, 1)
    short = g.conv(g.op("AveragePool", [x], kernel_shape=[2, 2], strides=[2, 2]), c_in, c_out, 1)
    return g.op("Add", [short, b])


def build_model(arch: str, dataset: str = "cifar100", graph_name: str = "nasbench201",
                zeros: str = "computed") -> onnx.ModelProto:
    """The NB201 network of `arch` as a graph-only ONNX model with a symbolic `batch` dim."""
    if zeros not in ZEROS:
        raise ValueError(f"zeros={zeros!r}: one of {', '.join(ZEROS)}")
    hw, classes = DATASETS[dataset]
    edges = parse_arch(arch)
    g = GraphBuilder(graph_name + ".onnx.weights")
    x = g.bn(g.conv("input", 3, STAGE_CHANNELS[0], 3, 1, 1), STAGE_CHANNELS[0])
    c_prev = STAGE_CHANNELS[0]
    for stage, c in enumerate(STAGE_CHANNELS):
        if stage:
            x = _reduction(g, x, c_prev, c)
        for _ in range(CELLS_PER_STAGE):
            x = _cell(g, x, c, edges, zeros)
        c_prev = c
    x = g.op("GlobalAveragePool", [g.op("Relu", [g.bn(x, c_prev)])])
    x = g.op("Flatten", [x], axis=1)
    w, b = g.weight("fc_w", [classes, c_prev]), g.weight("fc_b", [classes])
    g.nodes.append(helper.make_node("Gemm", [x, w, b], ["logits"], name="classifier", transB=1))
    graph = helper.make_graph(
        g.nodes, graph_name,
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["batch", 3, hw, hw])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", classes])],
        initializer=g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="perfcard-zoo-nasbench201")
    model.ir_version = 7  # what opset 13 exports carry; onnx 1.12's default (8) is newer than needed
    return model


def help_archs(path: str = HELP_CSV) -> dict[int, str]:
    """arch index -> arch string for every NB201 cell in HELP's table (each index appears per device)."""
    archs: dict[int, str] = {}
    with gzip.open(path, "rt", newline="") as f:
        for row in csv.DictReader(f):
            if row["search_space"] != "nasbench201":
                continue
            idx = int(row["arch_index"])
            if archs.setdefault(idx, row["arch_str"]) != row["arch_str"]:
                raise ValueError(f"arch index {idx} has two strings in {path}")
    return archs


def graph_id(index: int, zeros: str = "computed") -> str:
    return f"nb201_{index:05d}" if zeros == "computed" else f"nb201d_{index:05d}"


# Every NAS-Bench-201 row this project measured before this time ran its cell with the `none` edges left out:
# the CPU and browser campaigns ran these graphs, the GPU campaign and autograd_memory.py the torch twin
# (their last such row: 2026-11-27T19:25:22).
DROPPED_UNTIL = "2026-11-28T12:00:00"


def as_measured(model: str, timestamp: str) -> str:
    """The zoo name of the graph a measured row ran, from the row's model ("nasbench201/nb201_00042" or
    "nb201_00042", as the CSVs name it) and its ISO timestamp: for a cell timed before DROPPED_UNTIL, the same
    cell with its `none` edges left out ("nasbench201_dropped/nb201d_00042"); any other model unchanged."""
    gen, _, gid = model.rpartition("/")
    if gen not in ("", GENERATOR) or not gid.startswith("nb201_") or timestamp >= DROPPED_UNTIL:
        return model
    dropped = graph_id(int(gid[len("nb201_"):]), "dropped")
    return f"{generator('dropped')}/{dropped}" if gen else dropped


def generator(zeros: str) -> str:
    """The manifest (and output folder) of the graphs built with `zeros`."""
    return GENERATOR if zeros == "computed" else f"{GENERATOR}_{zeros}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limit", type=int, help="only the first N arch indices")
    ap.add_argument("--only", help="comma-separated arch indices")
    ap.add_argument("--dataset", default="cifar100", choices=sorted(DATASETS))
    ap.add_argument("--no-analyze", action="store_true", help="write graphs and keys, leave PerfCard totals out")
    ap.add_argument("--zeros", default="computed", choices=ZEROS, help="how a none edge runs (the docstring)")
    args = ap.parse_args()
    gen = generator(args.zeros)

    archs = help_archs()
    indices = sorted(archs)
    if args.only:
        indices = [int(i) for i in args.only.split(",")]
    if args.limit:
        indices = indices[: args.limit]
    keys = {i: canonical_key(a) for i, a in archs.items()}
    first_of_key: dict[str, int] = {}
    for i in sorted(archs):
        first_of_key.setdefault(keys[i], i)

    out_dir = os.path.join(manifest.OUT_DIR, gen)
    os.makedirs(out_dir, exist_ok=True)
    hw, classes = DATASETS[args.dataset]
    totals_by_hash: dict[str, dict] = {}
    t0 = time.time()
    analyzed = reused = skipped = 0
    with manifest.ManifestWriter(gen) as writer:
        for e in writer.entries.values():
            if "macs" in e and e.get("config", {}).get("dataset") == args.dataset and \
                    e["config"].get("zeros") == args.zeros:
                totals_by_hash.setdefault(e["structure_hash"], {k: e[k] for k in
                                                                 ("macs", "flops", "params", "nodes", "activations")})
        for n, idx in enumerate(indices):
            gid = graph_id(idx, args.zeros)
            old = writer.entries.get(gid)
            if (writer.done(gid) and old.get("config", {}).get("dataset") == args.dataset
                    and old["config"].get("zeros") == args.zeros and (args.no_analyze or "macs" in old)):
                skipped += 1
                continue
            arch = archs[idx]
            model = build_model(arch, args.dataset, gid, args.zeros)
            path = os.path.join(out_dir, gid + ".onnx")
            graph_only.save(model, path)
            shash = manifest.structure_hash(model)
            entry = {
                "id": gid, "file": f"{gen}/{gid}.onnx", "family": "nasbench201", "variant": f"{idx:05d}",
                "config": {"arch": arch, "arch_index": idx, "dataset": args.dataset, "zeros": args.zeros, "input_hw": hw,
                           "num_classes": classes, "channels": list(STAGE_CHANNELS), "cells_per_stage": CELLS_PER_STAGE},
                "opset": OPSET, "inputs": manifest.input_dims(model), "bind": {"batch": 1},
                "structure_hash": shash, "canonical_key": keys[idx],
                "canonical_id": graph_id(first_of_key[keys[idx]], args.zeros),
                "names": {"help_nb201_arch": arch},
            }
            if not args.no_analyze:
                totals = totals_by_hash.get(shash)
                if totals is None:
                    t = manifest.analyze(path, {"batch": 1})
                    totals = {k: t[k] for k in ("macs", "flops", "params", "nodes", "activations")}
                    totals_by_hash[shash] = totals
                    analyzed += 1
                else:
                    reused += 1
                entry.update(totals)
            writer.add(entry)
            if (n + 1) % 500 == 0:
                writer.close()  # a stopped run keeps what it did
                print(f"{n + 1}/{len(indices)} graphs, {analyzed} analyzed, {reused} reused, "
                      f"{time.time() - t0:.0f} s", flush=True)
    n_keys = len({keys[i] for i in indices})
    n_hash = len({writer.entries[graph_id(i, args.zeros)]["structure_hash"] for i in indices})
    print(f"{len(indices)} archs ({skipped} already done): {n_hash} distinct graphs (structure_hash), "
          f"{n_keys} distinct cells up to isomorphism; {analyzed} analyzed, {reused} reused; "
          f"{time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
