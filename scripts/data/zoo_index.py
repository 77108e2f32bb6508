"""The zoo graphs the training tables can join measurements to, and the lookups by public name.

Graphs come from the committed manifests (scripts/zoo/manifest.read_all()). The older export in
scripts/zoo/out/*.onnx + out/manifest.json (78 torchvision models + BERT) is added as generator `zoo_v0`:
our CPU campaign measured exactly those files, and before the new manifests land it is the only zoo there is
(its timm names then come from the confirmed map scripts/data/timm_torchvision_map.json).
"""
from __future__ import annotations

import json
import os
from collections import defaultdict
from typing import Optional

from scripts.zoo import manifest as zm

LEGACY = "zoo_v0"


def _legacy_entries() -> list[dict]:
    path = os.path.join(zm.OUT_DIR, "manifest.json")
    if not os.path.exists(path):
        return []
    import onnx

    with open(path) as f:
        models = dict(json.load(f)["models"])
    for extra in ("bert_base",):  # exported by export_bert.py, described in its own json
        j = os.path.join(zm.OUT_DIR, f"{extra}.json")
        if extra not in models and os.path.exists(j):
            with open(j) as f:
                models[extra] = json.load(f)
    from .timm_to_torchvision import load_map

    tv_to_timm = load_map(reverse=True)
    out = []
    for name, info in sorted(models.items()):
        f = os.path.join(zm.OUT_DIR, f"{name}.onnx")
        if not os.path.exists(f):
            continue
        m = onnx.load(f, load_external_data=False)
        inputs = zm.input_dims(m)
        syms = {d for dims in inputs.values() for d in dims if isinstance(d, str)}
        bind = {s: 1 for s in syms}
        if "sequence" in syms:
            bind["sequence"] = int(info.get("count_sequence", 128))
        out.append({"id": name, "file": f"{name}.onnx", "generator": LEGACY, "family": info.get("family") or name,
                    "variant": name, "inputs": inputs, "bind": bind, "structure_hash": zm.structure_hash(m),
                    "names": {"timm_all": tv_to_timm.get(name, [])}})
    return out


def image_size(entry: dict) -> Optional[int]:
    """Square spatial side of a 4-d image input, None for other graphs."""
    for dims in entry.get("inputs", {}).values():
        if len(dims) == 4 and isinstance(dims[2], int) and dims[2] == dims[3]:
            return dims[2]
    return None


def base_name(name: str) -> str:
    """timm / HF names without a pretrained tag or org: 'resnet50.a1_in1k' -> 'resnet50'."""
    return str(name).split("/")[-1].split(".")[0].lower()


class ZooIndex:
    def __init__(self, entries: Optional[list[dict]] = None, with_legacy: bool = True):
        self.entries = list(zm.read_all()) if entries is None else list(entries)
        new_timm = any((e.get("names") or {}).get("timm") for e in self.entries)
        self.legacy = _legacy_entries() if with_legacy else []
        if new_timm:  # the new torchvision manifest names its graphs itself; the old ones only serve our CPU rows
            for e in self.legacy:
                e["names"] = {}
        self.all = self.entries + self.legacy
        self.by_id = {(e["generator"], e["id"]): e for e in self.all}
        self.timm = defaultdict(dict)   # timm base name -> {img_size: entry}
        self.nb201 = {}                 # arch string -> entry
        self.hf = defaultdict(list)     # HF / ML.ENERGY base name -> entries
        self.legacy_by_id = {e["id"]: e for e in self.legacy}
        for e in self.all:
            names = e.get("names") or {}
            timm = [names["timm"]] if isinstance(names.get("timm"), str) else list(names.get("timm") or [])
            timm += list(names.get("timm_all") or [])
            for t in timm:
                self.timm[base_name(t)].setdefault(image_size(e), e)
            if names.get("help_nb201_arch"):
                self.nb201.setdefault(names["help_nb201_arch"], e)
            for key in ("hf", "mlenergy"):
                v = names.get(key)
                for n in ([v] if isinstance(v, str) else list(v or [])):
                    self.hf[base_name(n)].append(e)

    def timm_graph(self, model: str, img_size) -> tuple[Optional[dict], str]:
        sizes = self.timm.get(base_name(model))
        if not sizes:
            return None, "no zoo graph for the model name"
        e = sizes.get(int(img_size)) if img_size == img_size and img_size is not None else None
        if e is None:
            return None, "zoo graph only at other image sizes"
        return e, ""

    def llm_graph(self, model: str, step: str) -> tuple[Optional[dict], str]:
        cands = self.hf.get(base_name(model))
        if not cands:
            return None, "no zoo graph for the model name"
        for e in cands:
            if (e.get("config") or {}).get("step") == step:
                return e, ""
        return cands[0], ""
