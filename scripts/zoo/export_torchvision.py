"""Export torchvision's classification models to graph-only ONNX files for PerfCard's model zoo.

    /usr/bin/python3 -m scripts.zoo.export_torchvision [--opset 13] [--only resnet18,vit_b_16] [--no-count]

Every classification builder of the installed torchvision (0.14 on Debian) is constructed with
weights=None (nothing is downloaded: only the architecture is built), put in eval mode, and exported
with torch.onnx.export at the chosen opset with a dynamic batch dim named "batch". BatchNormalization
is kept as its own node (TrainingMode.PRESERVE on an eval-mode model: eval semantics, no Conv+BN
folding), so the graph holds exactly torchvision's parameters; pass --fold-bn for the folded export.

The weights are then stripped (graph_only.py): the .onnx keeps only structure and references an
external data file that is deleted. Output: scripts/zoo/out/<model>.onnx (git-ignored) and
scripts/zoo/out/manifest.json (family, variant, opset, input size, node count, torchvision's
num_params from the weights meta, our torch-side count of MACs/activations, failures and why).

The input size is the crop size of the model's DEFAULT weights (what torchvision's published figures
refer to), except where that size needs a different architecture (see WEIGHTS_OVERRIDE).

Keep the machine lean: one thread (torch.set_num_threads(1)), one model in memory at a time.
"""
from __future__ import annotations

import argparse
import gc
import io
import json
import os
import re
import sys
import tempfile
import time
import traceback

import torch
import torchvision
import torchvision.models as tvm
import onnx

from scripts import paths
from scripts.zoo import graph_only, torch_count

OUT = paths.ZOO_OUT

# DEFAULT weights whose crop size needs an architecture the weights=None builder does not make.
WEIGHTS_OVERRIDE = {
    "vit_h_14": "IMAGENET1K_SWAG_LINEAR_V1",  # DEFAULT is SWAG_E2E at 518 px (image_size=518 model)
}

# Families whose forward derives a tensor from parameters on every call (the relative-position bias
# gathered from its table in Swin and MaxViT; Swin V2's continuous-position MLP applied to a constant
# coordinate table). Constant folding would store the derived tensor (e.g. [heads, 49, 49] per block)
# instead of the parameters it comes from, so the graph's initializers no longer are the model's
# parameters. These are exported without constant folding by default (--constant-folding auto).
NO_FOLD_FAMILIES = {"swin", "swin_v2", "maxvit"}

FAMILY_RE = [
    (r"^resnext", "resnext"), (r"^wide_resnet", "wide_resnet"), (r"^resnet", "resnet"),
    (r"^vgg", "vgg"), (r"^densenet", "densenet"), (r"^mobilenet_v2", "mobilenet_v2"),
    (r"^mobilenet_v3", "mobilenet_v3"), (r"^efficientnet_v2", "efficientnet_v2"),
    (r"^efficientnet", "efficientnet"), (r"^mnasnet", "mnasnet"), (r"^shufflenet", "shufflenet_v2"),
    (r"^regnet_x", "regnet_x"), (r"^regnet_y", "regnet_y"), (r"^convnext", "convnext"),
    (r"^vit", "vit"), (r"^swin_v2", "swin_v2"), (r"^swin", "swin"), (r"^maxvit", "maxvit"),
    (r"^squeezenet", "squeezenet"), (r"^alexnet", "alexnet"), (r"^googlenet", "googlenet"),
    (r"^inception", "inception"),
]


def family_of(name: str) -> str:
    for pat, fam in FAMILY_RE:
        if re.match(pat, name):
            return fam
    return name


def reference_weights(name: str):
    enum = tvm.get_model_weights(name)
    entry = WEIGHTS_OVERRIDE.get(name)
    w = enum[entry] if entry else enum.DEFAULT
    crop = w.transforms.keywords.get("crop_size", 224)
    return w, int(crop)


def randomize_(model: torch.nn.Module) -> None:
    """Give every parameter and float buffer distinct random values. Builders initialise many tensors
    to constants (BatchNorm weight = ones = running_var), and torch.onnx.export de-duplicates identical
    initializers, which would merge unrelated tensors into one and under-count parameters."""
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.02)
        for b in model.buffers():
            if b.is_floating_point():
                b.copy_(torch.rand(b.shape, generator=g) + 0.5)


def unused_in_eval_params(model: torch.nn.Module, x: torch.Tensor) -> dict:
    """Parameters of modules that never run in an eval forward pass (inception_v3's AuxLogits,
    googlenet's aux1/aux2): an exported eval graph cannot contain them. {module name: count}.
    A module whose parameters its parent uses without calling it (MultiheadAttention.out_proj) is
    listed too, so check_zoo.py only discounts known auxiliary heads."""
    ran = set()
    hooks = [m.register_forward_hook(lambda mod, i, o: ran.add(id(mod))) for m in model.modules()]
    try:
        with torch.no_grad():
            model(x)
    finally:
        for h in hooks:
            h.remove()
    unused = {}
    for name, m in model.named_modules():
        n = sum(p.numel() for p in m.parameters(recurse=False))
        if id(m) not in ran and n:
            unused[name] = n
    return unused


def export_one(name: str, opset: int, fold_bn: bool, do_count: bool, out_dir: str,
               constant_folding: str = "auto") -> dict:
    w, size = reference_weights(name)
    folding = constant_folding == "on" or (constant_folding == "auto" and family_of(name) not in NO_FOLD_FAMILIES)
    rec = {
        "model": name, "family": family_of(name), "variant": name, "opset": opset,
        "input_shape": ["batch", 3, size, size], "input_size": size, "weights_entry": w.name,
        "torchvision_num_params": int(w.meta["num_params"]), "bn_folded": fold_bn,
        "torchvision_version": torchvision.__version__, "torch_version": torch.__version__,
        "constant_folding": folding,
    }
    t0 = time.time()
    torch.manual_seed(0)
    model = tvm.get_model(name, weights=None).eval()
    randomize_(model)
    rec["constructed_num_params"] = torch_count.num_params(model)
    x = torch.zeros(1, 3, size, size)
    # Only these builders make modules that eval never runs (auxiliary classifiers).
    rec["unused_in_eval_params"] = unused_in_eval_params(model, x) if rec["family"] in ("inception", "googlenet") else {}
    # nn.MultiheadAttention (ViT) takes a fused inference kernel when autograd is off, which neither
    # torch.onnx (opset <= 17) nor a dispatch-level count can see through: keep autograd on for it.
    has_mha = any(isinstance(m, torch.nn.MultiheadAttention) for m in model.modules())
    if do_count:
        c = torch_count.count(model, x, grad=has_mha)
        rec["torch_macs"] = c["macs"]
        rec["torch_activations"] = c["activations"]
    training = torch.onnx.TrainingMode.EVAL if fold_bn else torch.onnx.TrainingMode.PRESERVE
    out_path = os.path.join(out_dir, name + ".onnx")
    with tempfile.TemporaryDirectory(prefix="perfcard_export_", dir=out_dir) as tmp:
        # A file target lets torch write >2 GB models with external data; small ones load back whole.
        tmp_path = os.path.join(tmp, name + ".onnx")
        with torch.set_grad_enabled(has_mha):
            torch.onnx.export(
                model, (x,), tmp_path, opset_version=opset, training=training,
                input_names=["input"], output_names=["logits"],
                dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}},
                do_constant_folding=folding)
        del model
        gc.collect()
        proto = onnx.load(tmp_path, load_external_data=False)
        has_external = any(t.data_location == onnx.TensorProto.EXTERNAL for t in proto.graph.initializer)
        if has_external:
            # Already external (torch's >2 GB path): just rewrite the references to one file name and
            # drop the data files with the temp dir.
            for t in proto.graph.initializer:
                if t.data_location == onnx.TensorProto.EXTERNAL:
                    for e in t.external_data:
                        if e.key == "location":
                            e.value = name + ".onnx.weights"
            graph_only.save(proto, out_path)
        else:
            graph_only.strip_to_graph_only(proto, out_path)
    rec["nodes"] = len(proto.graph.node)
    rec["onnx_bytes"] = os.path.getsize(out_path)
    rec["export_seconds"] = round(time.time() - t0, 1)
    return rec


def merge(src: str, dst: str) -> int:
    with open(os.path.join(src, "manifest.json")) as f:
        other = json.load(f)
    path = os.path.join(dst, "manifest.json")
    with open(path) as f:
        manifest = json.load(f)
    for name, rec in other.get("models", {}).items():
        os.replace(os.path.join(src, name + ".onnx"), os.path.join(dst, name + ".onnx"))
        manifest["models"][name] = rec
        manifest["failed"].pop(name, None)
        print(f"merged {name}")
    for name, info in other.get("failed", {}).items():
        if name not in manifest["models"]:
            manifest["failed"][name] = info
    with open(path, "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--opset", type=int, default=13, choices=range(13, 18), metavar="{13..17}")
    ap.add_argument("--only", default="", help="comma-separated model names (default: all)")
    ap.add_argument("--skip", default="", help="comma-separated model names to leave out")
    ap.add_argument("--resume", action="store_true", help="leave out models already in the manifest")
    ap.add_argument("--fold-bn", action="store_true", help="export in EVAL mode (Conv+BN folded)")
    ap.add_argument("--constant-folding", choices=["auto", "on", "off"], default="auto",
                    help="auto: off for Swin/MaxViT (see NO_FOLD_FAMILIES), on otherwise")
    ap.add_argument("--no-count", action="store_true", help="skip the torch-side MAC count")
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--merge-from", metavar="DIR",
                    help="move the models of another --out folder (a parallel run) into --out and its manifest, then stop")
    args = ap.parse_args()
    if args.merge_from:
        return merge(args.merge_from, args.out)

    torch.set_num_threads(1)
    os.makedirs(args.out, exist_ok=True)
    names = tvm.list_models(module=tvm)
    if args.only:
        want = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = [n for n in want if n not in names]
        if unknown:
            print(f"unknown model(s): {', '.join(unknown)}", file=sys.stderr)
            return 2
        names = want
    skip = {n.strip() for n in args.skip.split(",") if n.strip()}
    names = [n for n in names if n not in skip]

    manifest_path = os.path.join(args.out, "manifest.json")
    manifest = {"models": {}, "failed": {}}
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest = json.load(f)
        manifest.setdefault("models", {})
        manifest.setdefault("failed", {})

    if args.resume:
        names = [n for n in names if not (n in manifest["models"] and
                                          os.path.exists(os.path.join(args.out, n + ".onnx")))]
    failures = 0
    for name in names:
        print(f"[export] {name} (opset {args.opset})", flush=True)
        try:
            rec = export_one(name, args.opset, args.fold_bn, not args.no_count, args.out, args.constant_folding)
            manifest["models"][name] = rec
            manifest["failed"].pop(name, None)
            print(f"   ok: {rec['nodes']} nodes, {rec['onnx_bytes']} bytes, {rec['export_seconds']} s", flush=True)
        except Exception as e:  # record why and go on
            failures += 1
            msg = f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"
            manifest["failed"][name] = {"opset": args.opset, "error": msg,
                                        "where": traceback.format_exc().strip().splitlines()[-3:]}
            manifest["models"].pop(name, None)
            print(f"   FAILED: {msg}", flush=True)
        gc.collect()
        with open(manifest_path, "w") as f:
            json.dump(manifest, f, indent=1, sort_keys=True)
    print(f"{len(names) - failures} exported, {failures} failed; manifest: {manifest_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
