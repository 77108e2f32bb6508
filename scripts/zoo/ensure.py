"""One zoo graph on disk, written by its own generator when this clone lacks it. Graphs are not committed
(`scripts.zoo.all` writes every one in tens of minutes); an evaluation that needs a few dozen writes those.

    from scripts.zoo.ensure import ensure_graph, ensure_models
    path = ensure_graph(entry)        # entry: a manifest line (scripts/zoo/manifests/*.jsonl)
    still_missing = ensure_models(["resnet18", "transformers/gpt2"])   # names as the measured CSVs give them

The graph written is checked against the manifest's structure hash: a generator that changed since the
manifest was written raises instead of handing back another network under the same name.
"""
from __future__ import annotations

import os
import subprocess
import sys

from scripts import paths
from scripts.zoo import graph_only, manifest


def _build(entry: dict):
    gen, cfg = entry.get("generator"), entry["config"]
    if gen == "torchvision":
        from scripts.zoo.export_variants import export
        path = os.path.join(manifest.OUT_DIR, entry["file"])
        return export(cfg, entry["family"], path), True  # export writes the file itself
    if gen == "transformers":
        from scripts.zoo import transformers
        return transformers.build(cfg, entry["id"], cfg.get("step") == "decode"), False
    if gen in ("nasbench201", "nasbench201_dropped"):
        from scripts.zoo import nasbench201
        return nasbench201.build_model(cfg["arch"], cfg.get("dataset", "cifar100"), entry["id"], cfg["zeros"]), False
    raise SystemExit(f"{entry['id']}: no generator {gen!r} to write {entry['file']} (run scripts.zoo.all)")


def ensure_graph(entry: dict) -> str:
    path = os.path.join(manifest.OUT_DIR, entry["file"])
    if os.path.exists(path):
        return path
    os.makedirs(os.path.dirname(path), exist_ok=True)
    print(f"writing {entry['file']} (missing from the zoo)", file=sys.stderr, flush=True)
    model, written = _build(entry)
    want = entry.get("structure_hash")
    got = manifest.structure_hash(model)
    if want and got != want:
        if written:
            os.remove(path)
        raise RuntimeError(f"{entry['id']}: the generator now writes structure {got[:12]}, the manifest has "
                           f"{want[:12]}; rewrite the manifest (scripts.zoo.all) before using this graph")
    if not written:
        graph_only.save(model, path)
    return path


def ensure_models(models) -> list[str]:
    """Writes the graphs of `models` (named as the measured CSVs name them: "<generator>/<id>", or a classic
    export's file stem) that this clone lacks, each by its own generator: manifest entries one by one, the
    classic exports in one export_torchvision run. Returns the names still without a graph (no manifest line
    names them, or their generator failed), so that a caller can stop naming them instead of fitting or
    scoring on fewer rows than the committed figures."""
    missing = sorted({m for m in models if not os.path.exists(manifest.graph_path(m))})
    if not missing:
        return []
    by_name = {e["file"][:-len(".onnx")]: e for e in manifest.read_all()}
    classic = [m for m in missing if "/" not in m]
    print(f"writing {len(missing)} zoo graphs the rows need ({len(classic)} classic exports)", file=sys.stderr, flush=True)
    for m in missing:
        # A recorded duplicate's graph is the id it equals (manifest.graph_path): write that one.
        graph = os.path.relpath(manifest.graph_path(m), manifest.OUT_DIR)[:-len(".onnx")]
        if graph in by_name:
            ensure_graph(by_name[graph])
    if classic:
        subprocess.run([sys.executable, "-m", "scripts.zoo.export_torchvision", "--resume", "--no-count",
                        "--only", ",".join(classic)], check=False, cwd=paths.ROOT, stdout=subprocess.DEVNULL)
    return [m for m in missing if not os.path.exists(manifest.graph_path(m))]
