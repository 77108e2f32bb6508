"""Graph features for the training tables: the op vocabulary of the core's registry, and `perfcard analyze
--json --per-node` reduced to node features + edges + totals, cached on disk by (file sha256, bind).

The vocabulary comes from the core (`perfcard features --schema --json`, its "ops"): an op type's id is its
row's place in the registry, id 0 is kept for op types the registry does not know (no shape rule: the core
cannot cost them). The vocabulary is part of the schema hash, so a registry change that renumbers ids makes
predictors built on the old numbering refuse the new data instead of reading wrong op types.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
import subprocess
from functools import lru_cache

# Node features, in column order of the graph dataset's `node_feat` (op type and class ids are separate int
# arrays). Changing this list changes the schema hash, so predictors trained on the old layout refuse it.
OUT_DIMS = 4
NODE_FEATURES = ["log_flops", "log_macs", "log_bytes_read", "log_bytes_written", "log_params", "out_rank"] + \
    [f"log_out_dim{i}" for i in range(OUT_DIMS)]
# Graph-level totals kept from `analyze` (the whole-model table's model features, before the op-class mix).
TOTALS = ["macs", "flops", "params", "weight_bytes", "activations", "bytes_read", "bytes_written",
          "peak_activation_bytes", "input_bytes", "output_bytes", "nodes", "unknown_nodes", "uncosted_nodes"]
CACHE_VERSION = 1


def op_key(domain: str, op_type: str) -> str:
    return op_type if domain in ("", "ai.onnx") else f"{domain}::{op_type}"


@lru_cache(maxsize=1)
def _schema() -> dict:
    from scripts.roofline.perfcard_eval import cli
    return json.loads(subprocess.run([cli(), "features", "--schema", "--json"], check=True, capture_output=True,
                                     text=True).stdout)


def op_classes() -> list[str]:
    """The core's op classes as `analyze --json` spells them, in enum order (a class id is its place)."""
    return list(_schema()["op_classes"])


@lru_cache(maxsize=1)
def op_vocab() -> dict[str, int]:
    """The core's op vocabulary (`perfcard features --schema --json`, "ops": the registry in order)."""
    vocab = {"<unknown>": 0}
    for r in _schema()["ops"]:
        vocab.setdefault(op_key(r["domain"], r["op_type"]), len(vocab))
    return vocab


def file_sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _log(x) -> float:
    return math.log1p(max(float(x or 0.0), 0.0))


def reduce_analysis(doc: dict) -> dict:
    """The parts of one analyze document the tables use: totals, op-class mix, node features, edges."""
    vocab = op_vocab()
    nodes = doc.get("nodes", [])
    producer: dict[str, int] = {}
    for i, n in enumerate(nodes):
        for o in n.get("outputs") or []:
            if o:  # an omitted optional output is null
                producer[o["name"]] = i
    ops, classes, feats, edges = [], [], [], []
    classes_of = op_classes()
    mix_flops = {c: 0.0 for c in classes_of}
    mix_nodes = {c: 0 for c in classes_of}
    for i, n in enumerate(nodes):
        cls = n.get("class", "other")
        ops.append(vocab.get(op_key(n.get("domain", ""), n["op_type"]), 0))
        classes.append(classes_of.index(cls) if cls in classes_of else classes_of.index("other"))
        mix_flops[cls] = mix_flops.get(cls, 0.0) + float(n.get("flops") or 0.0)
        mix_nodes[cls] = mix_nodes.get(cls, 0) + 1
        outs = n.get("outputs") or []
        shape = list((outs[0] or {}).get("shape") or []) if outs else []
        dims = [d if isinstance(d, (int, float)) else 0 for d in shape][-OUT_DIMS:]
        dims = [0] * (OUT_DIMS - len(dims)) + dims
        feats.append([_log(n.get("flops")), _log(n.get("macs")), _log(n.get("bytes_read")),
                      _log(n.get("bytes_written")), _log(n.get("params")), float(len(shape))] + [_log(d) for d in dims])
        for inp in n.get("inputs") or []:
            src = producer.get(inp["name"]) if inp else None
            if src is not None and src != i:
                edges.append([src, i])
    t = doc["totals"]
    return {"totals": {k: t.get(k) for k in TOTALS}, "mix_flops": mix_flops, "mix_nodes": mix_nodes,
            "op": ops, "cls": classes, "feat": feats, "edges": edges, "unknown_ops": doc.get("unknown_ops", [])}


class AnalyzeCache:
    """`perfcard analyze --json --per-node` per (file sha256, bind), reduced and stored as json.gz, so a re-run
    reads instead of re-analyzing and graphs whose bytes are equal are analyzed once."""

    def __init__(self, cache_dir: str, binary: str):
        self.dir = cache_dir
        self.binary = binary
        self.hits = self.misses = 0
        os.makedirs(cache_dir, exist_ok=True)

    def _path(self, sha: str, bind: dict) -> str:
        b = ",".join(f"{k}={v}" for k, v in sorted(bind.items())) or "nobind"
        return os.path.join(self.dir, sha[:2], f"{sha}_{b}_v{CACHE_VERSION}.json.gz")

    def get(self, path: str, bind: dict, sha: str | None = None) -> dict:
        sha = sha or file_sha256(path)
        cp = self._path(sha, bind)
        if os.path.exists(cp):
            self.hits += 1
            with gzip.open(cp, "rt") as f:
                return json.load(f)
        self.misses += 1
        cmd = [self.binary, "analyze", path, "--json", "--per-node"]
        for k, v in sorted(bind.items()):
            cmd += ["--dim", f"{k}={v}"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"perfcard analyze {os.path.basename(path)}: {r.stderr.strip()}")
        red = reduce_analysis(json.loads(r.stdout))
        os.makedirs(os.path.dirname(cp), exist_ok=True)
        tmp = cp + ".tmp"
        with gzip.open(tmp, "wt") as f:
            json.dump(red, f, separators=(",", ":"))
        os.replace(tmp, cp)
        return red


def schema_hash(parts: dict) -> str:
    """sha256 over the feature lists and vocabularies a predictor depends on (canonical JSON)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
