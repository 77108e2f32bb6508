"""One zoo graph on disk, written by its own generator when this clone lacks it. Graphs are not committed
(`scripts.zoo.all` writes every one in tens of minutes); an evaluation that needs a few dozen writes those.

    from scripts.zoo.ensure import ensure_graph
    path = ensure_graph(entry)        # entry: a manifest line (scripts/zoo/manifests/*.jsonl)

The graph written is checked against the manifest's structure hash: a generator that changed since the
manifest was written raises instead of handing back another network under the same name.
"""
from __future__ import annotations

import os
import sys

from scripts.zoo import manifest


def _build(entry: dict):
    gen, cfg = entry.get("generator"), entry["config"]
    if gen == "torchvision":
        from scripts.zoo.export_variants import export
        path = os.path.join(manifest.OUT_DIR, entry["file"])
        return export(cfg, entry["family"], path), True  # export writes the file itself
    if gen == "transformers":
        from scripts.zoo import transformers
        return transformers.build(cfg, entry["id"], cfg.get("step") == "decode"), False
    if gen == "nasbench201":
        from scripts.zoo import nasbench201
        return nasbench201.build_model(cfg["arch"], cfg.get("dataset", "cifar100"), entry["id"]), False
    raise SystemExit(f"{entry['id']}: no generator {gen!r} to write {entry['file']} (run scripts.zoo.all)")


def ensure_graph(entry: dict) -> str:
    path = os.path.join(manifest.OUT_DIR, entry["file"])
    if os.path.exists(path):
        return path
    import onnx
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
        onnx.save_model(model, path)
    return path
