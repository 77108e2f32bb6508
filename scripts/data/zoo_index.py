"""The zoo graphs the training tables can join measurements to, and the lookups by public name.

Graphs come from the committed manifests (scripts/zoo/manifest.read_all()). The older export in
scripts/zoo/out/*.onnx + out/manifest.json (78 torchvision models + BERT) is added as generator `zoo_v0`:
our CPU campaign names those files by stem ("resnet18") and the generated ones "<generator>/<id>". Its
timm names come from the confirmed map scripts/data/timm_torchvision_map.json; where a manifest has a graph
for the same timm name at the same image size (names.timm / names.timm_aliases), the manifest's graph is
the one joined.
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


def _as_list(v) -> list:
    return [v] if isinstance(v, str) else list(v or [])


def image_size(entry: dict) -> Optional[int]:
    """Square spatial side of a 4-d image input, None for other graphs."""
    for dims in entry.get("inputs", {}).values():
        if len(dims) == 4 and isinstance(dims[2], int) and dims[2] == dims[3]:
            return dims[2]
    return None


def timm_base(name: str) -> str:
    """timm names without the pretrained tag: 'resnet50.a1_in1k' -> 'resnet50'."""
    return str(name).split(".")[0].lower()


def hf_base(name: str) -> str:
    """HF ids without the org (orgs get renamed: 'bert-base-uncased' is now 'google-bert/...'); dots stay
    ('Llama-3.1-8B' and 'Llama-3-8B' differ)."""
    return str(name).split("/")[-1].lower()


class ZooIndex:
    def __init__(self, entries: Optional[list[dict]] = None, with_legacy: bool = True):
        self.entries = list(zm.read_all()) if entries is None else list(entries)
        self.legacy = _legacy_entries() if with_legacy else []
        self.all = self.entries + self.legacy
        self.by_id = {(e["generator"], e["id"]): e for e in self.all}
        self.timm = defaultdict(dict)   # timm base name -> {img_size: entry}
        self.nb201 = {}                 # arch string -> entry
        self.hf = defaultdict(list)     # HF id without org -> entries
        self.mlenergy = defaultdict(list)  # ML.ENERGY model id (as the zoo's names.mlenergy lists it) -> entries
        self.legacy_by_id = {e["id"]: e for e in self.legacy}
        def timm_names(names: dict) -> list:
            return _as_list(names.get("timm")) + _as_list(names.get("timm_aliases")) + _as_list(names.get("timm_all"))

        for e in self.all:
            names = e.get("names") or {}
            timm = timm_names(names)
            for t in timm:
                # self.all lists the manifests before the old export: where both have a graph of one timm
                # name at one size, the manifest's wins
                self.timm[timm_base(t)].setdefault(image_size(e), e)
            if names.get("help_nb201_arch"):
                self.nb201.setdefault(names["help_nb201_arch"], e)
            for key, index, norm in (("hf", self.hf, hf_base), ("mlenergy", self.mlenergy, str.lower)):
                v = names.get(key)
                for n in ([v] if isinstance(v, str) else list(v or [])):
                    index[norm(n)].append(e)

    def timm_graph(self, model: str, img_size) -> tuple[Optional[dict], str]:
        sizes = self.timm.get(timm_base(model))
        if not sizes:
            return None, "no zoo graph for the model name"
        e = sizes.get(int(img_size)) if img_size == img_size and img_size is not None else None
        if e is None:
            return None, "zoo graph only at other image sizes"
        return e, ""

    def llm_graph(self, model: str, step: str, by: str = "hf") -> tuple[Optional[dict], str]:
        """The zoo graph of this model for `step` (encode | prefill | decode); by='mlenergy' matches the
        ML.ENERGY ids the zoo lists, by='hf' a Hugging Face id."""
        cands = self.mlenergy.get(str(model).lower()) if by == "mlenergy" else self.hf.get(hf_base(model))
        if not cands:
            return None, "no zoo graph for the model name"
        for e in cands:
            if (e.get("config") or {}).get("step") == step:
                return e, ""
        return cands[0], ""
