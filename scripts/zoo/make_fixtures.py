"""Make the small graph-only ONNX fixtures of tests/zoo_test.cpp and their expected figures.

    /usr/bin/python3 -m scripts.zoo.make_fixtures

Writes tests/data/models/{resnet18,mobilenet_v3_small,vit_tiny,bert_tiny}.onnx (weights stripped, all
of them together well under 1 MB) and tests/data/models/expected.json.

The expected figures never come from PerfCard. Each fixture has:
  * "published": figures published by others for the same architecture (torchvision's _ops and
    num_params, timm's benchmark gmacs/macts/param_count, read from scripts/zoo/torchvision_reference.csv
    and ../shared/data/public/timm_benchmarks_long.csv.gz), with the bar the zoo check uses;
  * "exact": an independent count: PyTorch's dispatch-level count of convolution/matrix-product MACs
    and their output elements (scripts/zoo/torch_count.py), the parameters of the torch module, and for
    BERT the closed-form figures of its configuration (scripts/zoo/bert.py).
If the shared folder is absent, the published timm figures are taken from expected.json as committed.
"""
from __future__ import annotations

import csv
import gzip
import json
import os
import sys
import tempfile

import torch
import onnx

from scripts import paths
from scripts.cli import no_options
from scripts.zoo import export_bert, export_torchvision, graph_only, torch_count
from scripts.zoo.bert import BERT_TINY, Bert

DEST = os.path.join(paths.TEST_DATA, "models")
TIMM_CSV = paths.shared("timm_benchmarks_long.csv.gz")


def timm_row(name: str, size: int):
    if not os.path.exists(TIMM_CSV):
        return None
    best = {}
    with gzip.open(TIMM_CSV, "rt") as f:
        for r in csv.DictReader(f):
            if r["model"] == name and int(r["img_size"]) == size and r["mode"] == "infer" and r["torch"] == "113" and r["gmacs"]:
                key = (r["gmacs"], r["macts_M"], r["param_count_M"])
                best[key] = best.get(key, 0) + 1
    if not best:
        return None
    g, a, p = max(best, key=best.get)
    return {"source": f"timm_benchmarks_long.csv.gz {name} @{size}, torch 1.13 inference rows",
            "gmacs": float(g), "macts_M": float(a), "param_count_M": float(p)}


def tv_reference(name: str) -> dict:
    with open(os.path.join(paths.ZOO, "torchvision_reference.csv")) as f:
        rows = [l for l in f if not l.startswith("#")]
    for r in csv.DictReader(rows):
        if r["model"] == name:
            return {"source": f"torchvision {r['source']} (_ops, num_params); scripts/zoo/torchvision_reference.csv",
                    "ops_gmacs": float(r["ops_gmacs"]), "num_params": int(r["num_params"])}
    raise KeyError(name)


def export_vit_tiny(path: str) -> dict:
    """ViT-Ti/16 (DeiT-tiny / timm vit_tiny_patch16_224 shape) built with torchvision's VisionTransformer."""
    from torchvision.models.vision_transformer import VisionTransformer
    torch.manual_seed(0)
    m = VisionTransformer(image_size=224, patch_size=16, num_layers=12, num_heads=3, hidden_dim=192, mlp_dim=768).eval()
    export_torchvision.randomize_(m)
    x = torch.zeros(1, 3, 224, 224)
    c = torch_count.count(m, x)
    with tempfile.TemporaryDirectory() as tmp:
        p = os.path.join(tmp, "m.onnx")
        with torch.no_grad():
            torch.onnx.export(m, (x,), p, opset_version=13, input_names=["input"], output_names=["logits"],
                              dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}})
        proto = onnx.load(p)
    graph_only.strip_to_graph_only(proto, path)
    return {"macs": c["macs"], "activations": c["activations"], "params": torch_count.num_params(m)}


def main() -> int:
    torch.set_num_threads(1)
    os.makedirs(DEST, exist_ok=True)
    exp_path = os.path.join(DEST, "expected.json")
    old = {}
    if os.path.exists(exp_path):
        with open(exp_path) as f:
            old = json.load(f).get("models", {})
    models = {}

    for name, timm_name in [("resnet18", "resnet18"), ("mobilenet_v3_small", "mobilenetv3_small_100")]:
        rec = export_torchvision.export_one(name, 13, False, True, DEST)
        published = {"torchvision": tv_reference(name)}
        t = timm_row(timm_name, rec["input_size"]) or old.get(name, {}).get("published", {}).get("timm")
        if t:
            published["timm"] = t
        models[name] = {
            "file": f"models/{name}.onnx", "input": "input [batch, 3, 224, 224]",
            "exact": {"source": "scripts/zoo/torch_count.py (PyTorch dispatch count) and module parameters",
                      "macs": rec["torch_macs"], "activations": rec["torch_activations"],
                      "params": rec["constructed_num_params"]},
            "published": published,
        }

    vit = export_vit_tiny(os.path.join(DEST, "vit_tiny.onnx"))
    t = timm_row("vit_tiny_patch16_224", 224) or old.get("vit_tiny", {}).get("published", {}).get("timm")
    models["vit_tiny"] = {
        "file": "models/vit_tiny.onnx", "input": "input [batch, 3, 224, 224]",
        "architecture": "torchvision VisionTransformer(image_size=224, patch_size=16, num_layers=12, num_heads=3, hidden_dim=192, mlp_dim=768) = ViT-Ti/16",
        "exact": {"source": "scripts/zoo/torch_count.py (PyTorch dispatch count) and module parameters", **vit},
        "published": {"timm": t} if t else {},
    }

    brec = export_bert.export("tiny", 13, os.path.join(DEST, "bert_tiny.onnx"), count_seq=64)
    os.remove(os.path.join(DEST, "bert_tiny.onnx") + ".json") if os.path.exists(os.path.join(DEST, "bert_tiny.onnx.json")) else None
    models["bert_tiny"] = {
        "file": "models/bert_tiny.onnx",
        "input": "input_ids, token_type_ids, attention_mask: int64 [batch, sequence]",
        "architecture": f"scripts/zoo/bert.py BERT_TINY: {BERT_TINY}",
        "exact": {"source": "closed form of the configuration (scripts/zoo/bert.py BertConfig.expected_*), "
                            "equal to the PyTorch dispatch count",
                  "params": BERT_TINY.expected_params(),
                  "macs_per_token_linear": BERT_TINY.layers * (4 * BERT_TINY.hidden ** 2 + 2 * BERT_TINY.hidden * BERT_TINY.intermediate),
                  "macs_b1_s64": BERT_TINY.expected_macs(1, 64), "activations_b1_s64": BERT_TINY.expected_activations(1, 64),
                  "macs_b4_s128": BERT_TINY.expected_macs(4, 128), "activations_b4_s128": BERT_TINY.expected_activations(4, 128)},
        "published": {},
    }
    assert brec["torch_macs"] == BERT_TINY.expected_macs(1, 64), (brec["torch_macs"], BERT_TINY.expected_macs(1, 64))
    assert brec["torch_activations"] == BERT_TINY.expected_activations(1, 64)

    doc = {
        "about": "Expected totals of the graph-only fixtures, for tests/zoo_test.cpp. Made by "
                 "scripts/zoo/make_fixtures.py from published figures and independent counts, never from "
                 "PerfCard's output. MACs count convolutions and matrix products; activations are their output "
                 "elements (timm's macts); params exclude BatchNorm running statistics.",
        "tolerance": {"exact": 0.005, "torchvision_macs": 0.01, "torchvision_params": 0.01,
                      "timm_macs": 0.02, "timm_activations": 0.05},
        "models": models,
    }
    with open(exp_path, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    total = 0
    for n in sorted(os.listdir(DEST)):
        size = os.path.getsize(os.path.join(DEST, n))
        total += size
        print(f"{n:28} {size:8d} bytes")
    print(f"{'total':28} {total:8d} bytes")
    return 0


if __name__ == "__main__":
    no_options(__doc__)
    sys.exit(main())
