"""The zoo's committed manifests: one JSON line per graph in scripts/zoo/manifests/<generator>.jsonl.

Every generator (torchvision exports and their variants, NAS-Bench-201 cells, transformers from configs)
writes its own file through `ManifestWriter`, so generators never edit each other's lines; consumers
(the measurement campaign, the training tables) read all of them with `read_all()`.

A line holds at least:
  id              unique across the zoo, also the file stem: out/<generator>/<id>.onnx
  file            path relative to scripts/zoo/out/
  generator, family, variant
  config          the constructor arguments the graph was built from (enough to rebuild it)
  opset
  inputs          {input name: [dims]}; a dim is an int or a symbol name ("batch", "sequence", ...)
  bind            the symbol values `macs`/`flops`/... were computed at (e.g. {"batch": 1})
  macs, flops, params, nodes, activations   PerfCard's `analyze` totals at `bind`
  structure_hash  sha256 of the graph's structure with names removed: two ids with one hash are one graph
  names           names of the same architecture in public sources, e.g. {"timm": "resnet50.a1_in1k"}
"""
from __future__ import annotations

import glob
import hashlib
import json
import os
import subprocess

from scripts import paths

MANIFEST_DIR = paths.ZOO_MANIFESTS
OUT_DIR = paths.ZOO_OUT


def perfcard_binary() -> str:
    """The native CLI: $PERFCARD, else the first build that has one."""
    env = os.environ.get("PERFCARD")
    if env:
        return env
    for build in ("native", "shapes", "asan"):
        path = os.path.join(paths.BUILD, build, "core", "perfcard")
        if os.path.exists(path):
            return path
    raise FileNotFoundError("no perfcard binary: run `npm run build` (or set PERFCARD=/path/to/perfcard)")


def analyze(path: str, bind: dict[str, int]) -> dict:
    """PerfCard's totals for one graph with its symbols bound; raises with the CLI's message on failure."""
    cmd = [perfcard_binary(), "analyze", path, "--json"]
    for k, v in sorted(bind.items()):
        cmd += ["--dim", f"{k}={v}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"perfcard analyze {os.path.basename(path)}: {r.stderr.strip()}")
    doc = json.loads(r.stdout)
    if doc.get("unknown_ops"):
        raise RuntimeError(f"{os.path.basename(path)}: unknown ops {doc['unknown_ops']}")
    return doc["totals"]


def _dims(type_proto) -> list:
    if not type_proto.HasField("tensor_type") or not type_proto.tensor_type.HasField("shape"):
        return []
    return [d.dim_param if d.HasField("dim_param") else int(d.dim_value) for d in type_proto.tensor_type.shape.dim]


def input_dims(model) -> dict[str, list]:
    inits = {t.name for t in model.graph.initializer}
    return {i.name: _dims(i.type) for i in model.graph.input if i.name not in inits}


def structure_hash(model) -> str:
    """sha256 over ops, attributes, edges (values renumbered by first use), initializer dtypes/dims and
    graph input/output types; node, value and initializer names do not count, so re-exports of one
    architecture hash alike and two architectures that differ anywhere do not."""
    h = hashlib.sha256()

    def graph(g, ids):
        def vid(name):
            if name == "":
                return "-"
            if name not in ids:
                ids[name] = len(ids)
            return str(ids[name])

        for i in g.input:
            h.update(f"in {vid(i.name)} {i.type.SerializeToString().hex()}\n".encode())
        for t in sorted(g.initializer, key=lambda t: t.name):
            small = t.raw_data.hex() if len(t.raw_data) <= 128 else ""
            vals = list(t.int64_data) + list(t.int32_data) + list(t.float_data)
            h.update(f"init {vid(t.name)} {t.data_type} {list(t.dims)} {small} {vals[:16]}\n".encode())
        for n in g.node:
            h.update(f"node {n.domain}::{n.op_type} {[vid(x) for x in n.input]} -> {[vid(x) for x in n.output]}\n"
                     .encode())
            for a in sorted(n.attribute, key=lambda a: a.name):
                if a.g.node or a.graphs:
                    h.update(f"attr {a.name} graph\n".encode())
                    for sub in ([a.g] if a.g.node else []) + list(a.graphs):
                        graph(sub, ids)
                else:
                    h.update(f"attr {a.name} {a.type} {a.i} {a.f!r} {a.s.hex()} {list(a.ints)} "
                             f"{list(a.floats)} {a.t.SerializeToString().hex() if a.HasField('t') else ''}\n".encode())
        for o in g.output:
            h.update(f"out {vid(o.name)} {o.type.SerializeToString().hex()}\n".encode())

    graph(model.graph, {})
    return h.hexdigest()


class ManifestWriter:
    """Appends to manifests/<generator>.jsonl, keeping lines sorted by id on close so diffs stay small;
    `done` lets a resumed run skip what is already there."""

    def __init__(self, generator: str):
        self.generator = generator
        self.path = os.path.join(MANIFEST_DIR, f"{generator}.jsonl")
        self.entries: dict[str, dict] = {}
        if os.path.exists(self.path):
            with open(self.path) as f:
                for line in f:
                    if line.strip():
                        e = json.loads(line)
                        self.entries[e["id"]] = e

    def done(self, graph_id: str) -> bool:
        e = self.entries.get(graph_id)
        return e is not None and os.path.exists(os.path.join(OUT_DIR, e["file"]))

    def add(self, entry: dict) -> None:
        entry = dict(entry, generator=self.generator)
        self.entries[entry["id"]] = entry

    def close(self) -> None:
        os.makedirs(MANIFEST_DIR, exist_ok=True)
        tmp = f"{self.path}.{os.getpid()}.tmp"  # two exporters of disjoint families may close at once
        with open(tmp, "w") as f:
            for k in sorted(self.entries):
                f.write(json.dumps(self.entries[k], sort_keys=True, separators=(",", ":")) + "\n")
        os.replace(tmp, self.path)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def read_all() -> list[dict]:
    """Every graph of every generator, in (generator, id) order."""
    out = []
    for path in sorted(glob.glob(os.path.join(MANIFEST_DIR, "*.jsonl"))):
        with open(path) as f:
            out.extend(json.loads(line) for line in f if line.strip())
    return out


def graph_path(model: str) -> str:
    """scripts/zoo/out/<model>.onnx for a zoo model named "<generator>/<id>" (or a classic export's stem),
    following the generator's recorded duplicates: an id measured before its graph turned out to be another
    id's (torchvision's own name wins over a variant that builds the same graph, and the variant's file is
    removed) is that id's graph, so its measured rows keep their graph."""
    path = os.path.join(OUT_DIR, f"{model}.onnx")
    if os.path.exists(path) or "/" not in model:
        return path
    generator, gid = model.split("/", 1)
    same = _duplicates(generator).get(gid)
    return os.path.join(OUT_DIR, generator, f"{same}.onnx") if same else path


_duplicates_of: dict[str, dict] = {}


def _duplicates(generator: str) -> dict:
    if generator not in _duplicates_of:
        path = os.path.join(MANIFEST_DIR, f"{generator}_failures.json")
        doc = {}
        if os.path.exists(path):
            with open(path) as f:
                doc = json.load(f)
        _duplicates_of[generator] = doc.get("_duplicates", {})
    return _duplicates_of[generator]
