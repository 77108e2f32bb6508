"""The torchvision zoo at scale: every classification model at several input sizes, plus width/depth
variants of the main families (DIPPM-style), built with torchvision's own classes and constructor arguments.

    nice -n 19 /usr/bin/python3 -m scripts.zoo.export_variants --resume [--families resnet,vit] [--limit 50]
    /usr/bin/python3 -m scripts.zoo.export_variants --list          # the plan (ids per family), no export

Writes scripts/zoo/out/torchvision/<id>.onnx (graph-only, git-ignored) and the committed manifest
scripts/zoo/manifests/torchvision.jsonl (schema: manifest.py). Every graph is analyzed by PerfCard at
{"batch": 1}; a graph whose structure_hash equals one already in the manifest is dropped (counted as
"duplicate"), so the manifest holds distinct graphs only. Export or analyze errors go to
manifests/torchvision_failures.json (id -> error) and the summary; never silently dropped.

Speed: weights are never initialised (torch.nn.init is a no-op while building) and every parameter/buffer
is then filled with its own constant, which is cheap and keeps torch.onnx from merging equal initializers
(that would under-count params). The graph is stripped in memory (no weight file is written). Plans are
ordered cheap-first so the count grows fast; big models come last.
"""
from __future__ import annotations

import argparse
import contextlib
import csv
import gc
import gzip
import io
import signal
import json
import os
import sys
import tempfile
import time
import traceback
from functools import partial

import onnx
import torch
import torch.nn as nn
import torchvision.models as tvm
from torchvision.models import efficientnet as tv_eff
from torchvision.models import mobilenetv3 as tv_mv3
from torchvision.models import regnet as tv_regnet
from torchvision.models import resnet as tv_resnet
from torchvision.models import vgg as tv_vgg
from torchvision.models import convnext as tv_convnext

from scripts import paths
from scripts.zoo import graph_only
from scripts.zoo import manifest as zm

GENERATOR = "torchvision"
OUT = os.path.join(zm.OUT_DIR, GENERATOR)
FAILURES = os.path.join(zm.MANIFEST_DIR, "torchvision_failures.json")
TIMM_CSV = paths.shared("timm_benchmarks_long.csv.gz")
OPSET = 13
SMALL_BYTES = 128  # as graph_only.py: shape/axes constants stay inline, shape inference needs them

# As export_torchvision.py: constant folding would store the relative-position bias gathered from its table
# (a [heads, N, N] tensor per block) instead of the table, so the initializers stop being the parameters.
NO_FOLD = {"swin", "swin_v2", "maxvit"}

CNN_SIZES = [128, 160, 192, 224, 256, 288, 320, 352, 384]
FEW_SIZES = [224, 288, 384]
BIG = {"regnet_y_128gf", "vit_h_14", "vit_l_16", "vit_l_32", "regnet_y_32gf", "regnet_x_32gf", "convnext_large",
       "efficientnet_v2_l", "efficientnet_b7", "efficientnet_b6", "swin_b", "swin_s", "vgg19_bn", "vgg19",
       "vgg16", "vgg16_bn", "wide_resnet101_2", "resnext101_32x8d", "resnext101_64x4d"}


# ---------------------------------------------------------------------------------------------- building

def _family(name: str) -> str:
    from scripts.zoo.export_torchvision import family_of  # one family naming for the whole zoo
    return family_of(name)


def build(cfg: dict) -> nn.Module:
    """The model a manifest `config` describes (config is the whole recipe: builder + its arguments)."""
    k = dict(cfg)
    kind = k.pop("builder")
    k.pop("image_size", None)
    if kind == "torchvision":
        extra = {"image_size": cfg["image_size"]} if k["model"].startswith("vit_") else {}
        return tvm.get_model(k["model"], weights=None, **extra)
    if kind == "ResNet":
        block = {"BasicBlock": tv_resnet.BasicBlock, "Bottleneck": tv_resnet.Bottleneck}[k["block"]]
        return tv_resnet.ResNet(block, k["layers"], groups=k["groups"], width_per_group=k["width_per_group"])
    if kind == "VGG":
        return tv_vgg.VGG(tv_vgg.make_layers(k["cfg"], batch_norm=k["batch_norm"]))
    if kind == "DenseNet":
        return tvm.DenseNet(growth_rate=k["growth_rate"], block_config=tuple(k["block_config"]),
                            num_init_features=k["num_init_features"])
    if kind == "MobileNetV2":
        return tvm.MobileNetV2(width_mult=k["width_mult"], inverted_residual_setting=k.get("inverted_residual_setting"))
    if kind == "MobileNetV3":
        setting, last = tv_mv3._mobilenet_v3_conf(k["arch"], width_mult=k["width_mult"])
        return tvm.MobileNetV3(setting, last)
    if kind == "EfficientNet":
        setting, last = tv_eff._efficientnet_conf("efficientnet_b0", width_mult=k["width_mult"],
                                                  depth_mult=k["depth_mult"])
        return tvm.EfficientNet(setting, dropout=0.2, last_channel=last)
    if kind == "MNASNet":
        return tvm.MNASNet(k["alpha"])
    if kind == "RegNet":
        bp = tv_regnet.BlockParams.from_init_params(depth=k["depth"], w_0=k["w_0"], w_a=k["w_a"], w_m=k["w_m"],
                                                    group_width=k["group_width"], se_ratio=k["se_ratio"])
        return tvm.RegNet(bp, norm_layer=partial(nn.BatchNorm2d, eps=1e-05, momentum=0.1))
    if kind == "ConvNeXt":
        ch, depths = k["channels"], k["depths"]
        setting = [tv_convnext.CNBlockConfig(ch[i], ch[i + 1] if i + 1 < len(ch) else None, depths[i])
                   for i in range(len(ch))]
        return tvm.ConvNeXt(setting)
    if kind == "VisionTransformer":
        return tvm.VisionTransformer(image_size=cfg["image_size"], patch_size=k["patch_size"],
                                     num_layers=k["num_layers"], num_heads=k["num_heads"],
                                     hidden_dim=k["hidden_dim"], mlp_dim=k["mlp_dim"])
    if kind == "SwinTransformer":
        return tvm.SwinTransformer(patch_size=[4, 4], embed_dim=k["embed_dim"], depths=k["depths"],
                                   num_heads=k["num_heads"], window_size=[k["window"], k["window"]])
    if kind == "ShuffleNetV2":
        return tvm.ShuffleNetV2(k["stages_repeats"], k["stages_out_channels"])
    raise ValueError(f"unknown builder {kind}")


@contextlib.contextmanager
def no_init():
    """Make torch.nn.init a no-op while a model is built: its random fills are most of the build time of a
    big model, and the values are replaced anyway (fill_distinct)."""
    names = [n for n in dir(nn.init) if n.endswith("_") and not n.startswith("__") and callable(getattr(nn.init, n))]
    saved = {n: getattr(nn.init, n) for n in names}
    try:
        for n in names:
            setattr(nn.init, n, lambda t, *a, **kw: t)
        yield
    finally:
        for n, f in saved.items():
            setattr(nn.init, n, f)


def fill_distinct(model: nn.Module) -> None:
    """One constant per tensor, all different: uninitialised memory may hold equal (zero) tensors, and
    torch.onnx de-duplicates equal initializers, which would merge unrelated parameters."""
    with torch.no_grad():
        for i, t in enumerate(list(model.parameters()) + [b for b in model.buffers() if b.is_floating_point()]):
            t.fill_(0.5 + 1e-4 * (i + 1))


# ---------------------------------------------------------------------------------------------- export

def _strip_tensor(t: onnx.TensorProto, location: str, offset: int) -> int:
    if t.data_location == onnx.TensorProto.EXTERNAL or not t.HasField("raw_data") or len(t.raw_data) <= SMALL_BYTES:
        return offset
    n = len(t.raw_data)
    t.ClearField("raw_data")
    del t.external_data[:]
    t.data_location = onnx.TensorProto.EXTERNAL
    for key, val in (("location", location), ("offset", str(offset)), ("length", str(n))):
        e = t.external_data.add()
        e.key, e.value = key, val
    return offset + n


def strip_in_memory(model: onnx.ModelProto, location: str) -> None:
    """Same result as graph_only.strip_to_graph_only (initializers and Constant tensors over 128 bytes become
    external references to a file that does not exist) without writing the weights to disk first."""
    off = 0

    def graph(g):
        nonlocal off
        for t in g.initializer:
            off = _strip_tensor(t, location, off)
        for n in g.node:
            for a in n.attribute:
                if a.HasField("t"):
                    off = _strip_tensor(a.t, location, off)
                if a.HasField("g"):
                    graph(a.g)
                for sub in a.graphs:
                    graph(sub)

    graph(model.graph)


# torch.onnx runs the ONNX checker over the whole proto, weights included (~10% of an export); the file is
# loaded back with onnx and analyzed by PerfCard right after, which rejects what the checker would.
torch._C._check_onnx_proto = lambda *a, **kw: None


def export(cfg: dict, family: str, path: str) -> onnx.ModelProto:
    size = cfg["image_size"]
    torch.manual_seed(0)
    with no_init():
        model = build(cfg)
    model.eval()
    fill_distinct(model)
    x = torch.zeros(1, 3, size, size)
    # nn.MultiheadAttention takes a fused kernel without an ONNX symbolic when autograd is off (ViT): keep
    # autograd on for those models only, as export_torchvision.py does.
    has_mha = any(isinstance(m, nn.MultiheadAttention) for m in model.modules())
    n_bytes = sum(p.numel() * 4 for p in model.parameters())
    kw = dict(opset_version=OPSET, training=torch.onnx.TrainingMode.PRESERVE, input_names=["input"],
              output_names=["logits"], dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}},
              do_constant_folding=family not in NO_FOLD)
    with torch.set_grad_enabled(has_mha):
        if n_bytes < 1_800_000_000:
            buf = io.BytesIO()
            torch.onnx.export(model, (x,), buf, **kw)
            del model
            proto = onnx.load_from_string(buf.getvalue())
            del buf
        else:  # over protobuf's 2 GB: torch writes external data itself, to a temp dir deleted here
            with tempfile.TemporaryDirectory(prefix="perfcard_variants_", dir=OUT) as tmp:
                torch.onnx.export(model, (x,), os.path.join(tmp, "m.onnx"), **kw)
                del model
                proto = onnx.load(os.path.join(tmp, "m.onnx"), load_external_data=False)
            for t in proto.graph.initializer:
                for e in t.external_data:
                    if e.key == "location":
                        e.value = os.path.basename(path) + ".weights"
    strip_in_memory(proto, os.path.basename(path) + ".weights")
    graph_only.save(proto, path)
    return proto


# ---------------------------------------------------------------------------------------------- the plan

def timm_sizes() -> dict[str, set[int]]:
    sizes: dict[str, set[int]] = {}
    with gzip.open(TIMM_CSV, "rt") as f:
        for r in csv.DictReader(f):
            sizes.setdefault(r["model"], set()).add(int(r["img_size"]))
    return sizes


def timm_names_by_tv() -> dict[str, list[str]]:
    from scripts.data.timm_to_torchvision import load_map
    return load_map(reverse=True)


# Families whose architecture does not depend on the input size (convolutions, then global pooling): a timm
# row of the mapped model at any image size is the same graph at that size. ViT (position embedding sized
# by image_size), Swin/MaxViT (windows), VGG/AlexNet (fixed-size adaptive pooling into Linear) are not.
SIZE_FREE = {"resnet", "resnext", "wide_resnet", "densenet", "mobilenet_v2", "mobilenet_v3", "efficientnet",
             "efficientnet_v2", "mnasnet", "regnet_x", "regnet_y", "convnext", "shufflenet_v2", "squeezenet",
             "googlenet", "inception"}


def base_sizes(name: str, family: str, default: int) -> list[int]:
    if family in ("vgg", "alexnet"):
        return [224]  # adaptive pooling to 7x7 (6x6) exports only where the feature map divides evenly
    if name in ("vit_h_14",):
        return [224, 336]
    if name in ("vit_l_16",):
        return [224, 288]
    if name in ("regnet_y_128gf", "vit_l_32"):
        return [224, 384]
    if family == "vit":
        p = int(name.split("_")[-1])
        return [s for s in range(128, 385, 32) if s % p == 0]
    if family in ("swin_v2", "maxvit"):
        return [default]  # swin_v2 does not export with torch 1.13 (aten::zero): tried once, recorded
    if family == "swin":
        return [224] if name in BIG else [224, 256, 288]
    sizes = set(FEW_SIZES if name in BIG else CNN_SIZES) | {default}
    if family == "inception":
        sizes = {s for s in sizes if s >= 160} | {299}
    return sorted(sizes)


def plan() -> list[dict]:
    """Every graph to make, as {id, family, variant, config, cost}; cost only orders the work."""
    tsizes = timm_sizes()
    by_tv = timm_names_by_tv()
    from scripts.zoo.export_torchvision import reference_weights
    items = []

    def add(gid, family, variant, cfg, cost, timm=None):
        items.append({"id": gid, "family": family, "variant": variant, "config": cfg, "cost": cost,
                      "timm": timm or []})

    for name in tvm.list_models(module=tvm):
        fam = _family(name)
        _, default = reference_weights(name)
        for s in base_sizes(name, fam, default):
            timm = [t for t in by_tv.get(name, []) if s in tsizes.get(t, ())
                    and (fam in SIZE_FREE or s == 224)]
            cost = (3 if name in BIG else 1) * (5 if fam in ("vit", "swin", "swin_v2", "maxvit") else 1)
            add(f"{name}_r{s}", fam, name, {"builder": "torchvision", "model": name, "image_size": s},
                cost * (s / 224) ** 0.5, timm)

    def v(gid, fam, variant, cfg, cost, sizes):
        for s in sizes:
            add(f"{gid}_r{s}", fam, variant, dict(cfg, image_size=s), cost)

    # ResNet / ResNeXt / WideResNet: block type, depth per stage, groups x width (torchvision's and timm's
    # depths; ResNeXt cardinalities 8..64; widths 32..128 per group as in RegNet/DIPPM grids).
    # torchvision's BasicBlock only has width 64 (it raises otherwise): basic variants vary depth only.
    depths_basic = [[1, 1, 1, 1], [1, 1, 2, 1], [1, 2, 2, 1], [2, 2, 2, 2], [2, 2, 3, 2], [2, 3, 4, 2],
                    [3, 4, 6, 3], [3, 4, 4, 3], [2, 2, 6, 2], [2, 4, 8, 2], [3, 4, 8, 3], [3, 6, 9, 3],
                    [1, 2, 4, 2], [2, 3, 3, 2], [3, 3, 3, 3], [3, 4, 12, 3]]
    depths_bneck = [[2, 2, 2, 2], [3, 4, 6, 3], [3, 4, 23, 3], [3, 8, 36, 3], [2, 3, 4, 2], [3, 4, 12, 3]]
    for L in depths_basic:
        tag = "-".join(map(str, L))
        v(f"resnet_basic_{tag}", "resnet", "resnet_basic",
          {"builder": "ResNet", "block": "BasicBlock", "layers": L, "groups": 1, "width_per_group": 64},
          sum(L) / 12, CNN_SIZES)
    for L in depths_bneck:
        for g, w in ((1, 32), (1, 64), (1, 128), (32, 4), (32, 8), (64, 4), (16, 8), (8, 16)):
            tag = "-".join(map(str, L))
            fam = "resnext" if g > 1 else ("wide_resnet" if w > 64 else "resnet")
            cost = (sum(L) / 16) * (w * g / 64)
            v(f"resnet_bneck_{tag}_g{g}_w{w}", fam, "resnet_bottleneck",
              {"builder": "ResNet", "block": "Bottleneck", "layers": L, "groups": g, "width_per_group": w},
              cost, [224] if cost > 2 else [160, 224])

    # VGG: convolutions per stage (1..4), with and without BatchNorm; the last stage stays 512 wide because
    # the classifier expects 512x7x7.
    widths = [64, 128, 256, 512, 512]
    for reps in ([1, 1, 1, 1, 1], [1, 1, 2, 2, 2], [2, 2, 2, 2, 2], [2, 2, 3, 3, 3], [2, 2, 4, 4, 4],
                 [1, 1, 2, 2, 1], [1, 2, 3, 3, 2], [2, 2, 3, 4, 2], [1, 1, 3, 3, 3], [2, 2, 2, 3, 3],
                 [1, 2, 2, 2, 2], [2, 3, 3, 3, 3], [1, 1, 1, 2, 2], [2, 2, 4, 3, 2], [1, 1, 4, 4, 4]):
        cfg = []
        for w, r in zip(widths, reps):
            cfg += [w] * r + ["M"]
        for bn in (False, True):
            v(f"vgg_{''.join(map(str, reps))}{'_bn' if bn else ''}", "vgg", "vgg_cfg",
              {"builder": "VGG", "cfg": cfg, "batch_norm": bn}, 2, [224])

    # DenseNet: growth 12..48, block configs of DenseNet-121/169/201/161/264 and shallower ones.
    for k in (12, 16, 24, 32, 40, 48):
        for bc in ((6, 12, 24, 16), (6, 12, 32, 32), (6, 12, 48, 32), (6, 12, 36, 24), (4, 8, 16, 12),
                   (3, 6, 12, 8)):
            for init in (2 * k, 64):
                if init == 64 and k == 32:
                    continue  # 2k == 64
                v(f"densenet_k{k}_{'-'.join(map(str, bc))}_i{init}", "densenet", "densenet",
                  {"builder": "DenseNet", "growth_rate": k, "block_config": list(bc), "num_init_features": init},
                  sum(bc) / 15, [224])

    # MobileNetV2: width multipliers of the paper's table (0.35..1.4) and DIPPM's finer steps.
    for wm in (0.25, 0.35, 0.5, 0.6, 0.75, 0.85, 1.0, 1.1, 1.25, 1.3, 1.4, 1.5, 1.75, 2.0):
        v(f"mobilenet_v2_w{wm}", "mobilenet_v2", "mobilenet_v2", {"builder": "MobileNetV2", "width_mult": wm},
          0.5, CNN_SIZES)
    # MobileNetV2 blocks with the expansion ratios and depths of the OFA/ProxylessNAS spaces (t 3/4/6,
    # depth x0.5..x1.5 per stage), through the constructor's inverted_residual_setting.
    base_ir = [[16, 1, 1], [24, 2, 2], [32, 3, 2], [64, 4, 2], [96, 3, 1], [160, 3, 2], [320, 1, 1]]
    for t in (3, 4, 6):
        for dm in (0.5, 1.0, 1.5):
            if (t, dm) == (6, 1.0):
                continue  # torchvision's own setting
            setting = [[1, c, n, st] if j == 0 else [t, c, max(1, round(n * dm)), st]
                       for j, (c, n, st) in enumerate(base_ir)]
            for wm in (0.5, 0.75, 1.0, 1.4):
                v(f"mobilenet_v2_t{t}_d{dm}_w{wm}", "mobilenet_v2", "mobilenet_v2_ir",
                  {"builder": "MobileNetV2", "width_mult": wm, "inverted_residual_setting": setting},
                  0.6 * dm, [128, 160, 192, 224, 256, 288])
    for arch in ("mobilenet_v3_small", "mobilenet_v3_large"):
        for wm in (0.35, 0.5, 0.6, 0.75, 0.85, 1.0, 1.1, 1.25, 1.4, 1.5):
            v(f"{arch}_w{wm}", "mobilenet_v3", arch, {"builder": "MobileNetV3", "arch": arch, "width_mult": wm},
              0.5, CNN_SIZES)
    # EfficientNet: the compound (width, depth) pairs of B0..B7 and the grid around them.
    # (width, depth) pairs of B0..B7 are left out: torchvision's own builders make those (B5..B7 with
    # another BatchNorm epsilon only, which would be a near-copy counted as a distinct graph).
    b_pairs = {(1.0, 1.0), (1.0, 1.1), (1.1, 1.2), (1.2, 1.4), (1.4, 1.8), (1.6, 2.2), (1.8, 2.6), (2.0, 3.1)}
    for wm in (0.5, 0.75, 1.0, 1.1, 1.2, 1.4, 1.6, 1.8, 2.0):
        for dm in (0.5, 1.0, 1.1, 1.2, 1.4, 1.8, 2.2, 2.6, 3.1):
            if (wm, dm) in b_pairs:
                continue
            v(f"efficientnet_w{wm}_d{dm}", "efficientnet", "efficientnet_b",
              {"builder": "EfficientNet", "width_mult": wm, "depth_mult": dm}, wm * dm,
              [224, 288] if wm * dm < 2 else [224])
    for alpha in (0.25, 0.35, 0.4, 0.5, 0.6, 0.65, 0.75, 0.85, 0.9, 1.0, 1.1, 1.2, 1.3, 1.5, 1.75, 2.0):
        v(f"mnasnet_a{alpha}", "mnasnet", "mnasnet", {"builder": "MNASNet", "alpha": alpha}, 0.5, CNN_SIZES)

    # RegNet: the design space of Radosavovic et al. (depth 12..28, w_0 24..128 step 8, w_a 8..64,
    # w_m 2..3, group width 8..64), X (no SE) and Y (SE 0.25); a fixed-seed sample of it.
    import random
    rng = random.Random(4)
    seen = set()
    while len(seen) < 240:
        c = (rng.choice(range(12, 29, 2)), rng.choice(range(24, 129, 8)), round(rng.uniform(8, 64), 2),
             round(rng.uniform(2.0, 3.0), 2), rng.choice([8, 16, 24, 32, 48, 64]), rng.choice([None, 0.25]))
        if c in seen:
            continue
        seen.add(c)
        d, w0, wa, wm, gw, se = c
        fam = "regnet_y" if se else "regnet_x"
        v(f"{fam}_d{d}_w{w0}_a{wa}_m{wm}_g{gw}", fam, "regnet_space",
          {"builder": "RegNet", "depth": d, "w_0": w0, "w_a": wa, "w_m": wm, "group_width": gw, "se_ratio": se},
          d / 16, [160, 224] if d <= 16 else [224])

    # ConvNeXt: stage widths (C, 2C, 4C, 8C) with C in 40..192, stage depths of the T/S variants and
    # smaller ones (ConvNeXt atto..nano use 2-2-6-2 / 2-2-8-2).
    for c in (40, 48, 64, 80, 96, 128, 160, 192):
        for dep in ([2, 2, 6, 2], [2, 2, 8, 2], [3, 3, 9, 3], [3, 3, 27, 3], [2, 2, 4, 2]):
            cost = 2 * sum(dep) / 15 * (c / 96) ** 2 + 1
            v(f"convnext_c{c}_{'-'.join(map(str, dep))}", "convnext", "convnext",
              {"builder": "ConvNeXt", "channels": [c, 2 * c, 4 * c, 8 * c], "depths": dep}, cost,
              [224] if cost > 2 else [224, 288])

    # ViT: patch 16/32 (and 8 for small ones), layers 4..12, hidden 192..768 with heads = hidden / 64,
    # MLP ratio 2 or 4 (DeiT-tiny/small/base and the ranges NAS spaces such as AutoFormer use).
    for patch in (16, 32):
        for hidden in (192, 256, 384, 512, 768):
            for layers in (4, 6, 8, 12):
                for ratio in (2, 4):
                    cost = 3 * layers / 12 * (hidden / 384) + (hidden / 384) ** 2 * (16 / patch) ** 2
                    v(f"vit_p{patch}_h{hidden}_l{layers}_m{ratio}", "vit", "vit",
                      {"builder": "VisionTransformer", "patch_size": patch, "num_layers": layers,
                       "num_heads": hidden // 64, "hidden_dim": hidden, "mlp_dim": hidden * ratio},
                      cost, [224])
    # Swin: embed dim 64..128 (heads = dim / 32 per stage doubling), stage depths, window 7 or 8.
    for dim in (64, 96, 128):
        for dep in ([2, 2, 2, 2], [2, 2, 6, 2], [2, 2, 4, 2]):
            for win in (7, 8):
                h = dim // 32
                v(f"swin_c{dim}_{'-'.join(map(str, dep))}_w{win}", "swin", "swin",
                  {"builder": "SwinTransformer", "embed_dim": dim, "depths": dep,
                   "num_heads": [h, 2 * h, 4 * h, 8 * h], "window": win}, 10 * sum(dep) / 12, [224])
    # ShuffleNetV2: the paper's widths x0.5..x2 with other stage repeats.
    for reps in ([4, 8, 4], [2, 4, 2], [3, 6, 3], [4, 12, 4]):
        for outs in ([24, 48, 96, 192, 1024], [24, 116, 232, 464, 1024], [24, 176, 352, 704, 1024],
                     [24, 244, 488, 976, 2048]):
            v(f"shufflenet_v2_{'-'.join(map(str, reps))}_c{outs[1]}", "shufflenet_v2", "shufflenet_v2",
              {"builder": "ShuffleNetV2", "stages_repeats": reps, "stages_out_channels": outs}, 0.8,
              CNN_SIZES)
    items.sort(key=lambda it: (it["cost"], it["id"]))
    return items


# ---------------------------------------------------------------------------------------------- main

def load_failures() -> dict:
    if os.path.exists(FAILURES):
        with open(FAILURES) as f:
            return json.load(f)
    return {}


def save_failures(fail: dict) -> None:
    with open(FAILURES + ".tmp", "w") as f:
        json.dump(fail, f, indent=1, sort_keys=True)
    os.replace(FAILURES + ".tmp", FAILURES)


def run_items(items, args, writer, hashes, fail, dups, counts) -> None:
    for i, it in enumerate(items):
        gid = it["id"]
        path = os.path.join(OUT, gid + ".onnx")
        t0 = time.time()
        try:
            if args.resume and os.path.exists(path):
                # written (atomically) by a run killed before its manifest was closed: reuse it
                proto = onnx.load(path, load_external_data=False)
            else:
                with torch.no_grad():
                    proto = export(it["config"], it["family"], path)
            h = zm.structure_hash(proto)
            other = hashes.get(h)
            if other is not None and other != gid:
                if it["config"]["builder"] == "torchvision" and writer.entries[other]["config"]["builder"] != "torchvision":
                    # torchvision's own name wins over a variant that builds the same graph (keeps its
                    # default-resolution id and timm name)
                    del writer.entries[other]
                    dups[other] = gid
                    with contextlib.suppress(FileNotFoundError):
                        os.remove(os.path.join(OUT, other + ".onnx"))
                    print(f"[{i + 1}/{len(items)}] {other}: now a duplicate of {gid}", flush=True)
                else:
                    dups[gid] = other
                    os.remove(path)
                    counts["dup"] += 1
                    print(f"[{i + 1}/{len(items)}] {gid}: duplicate of {other}", flush=True)
                    continue
            totals = zm.analyze(path, {"batch": 1})
            entry = {
                "id": gid, "file": f"{GENERATOR}/{gid}.onnx", "family": it["family"], "variant": it["variant"],
                "config": it["config"], "opset": OPSET, "inputs": zm.input_dims(proto), "bind": {"batch": 1},
                "macs": totals["macs"], "flops": totals["flops"], "params": totals["params"],
                "nodes": len(proto.graph.node), "activations": totals["activations"], "structure_hash": h,
                "names": ({"timm": it["timm"][0], **({"timm_aliases": it["timm"][1:]} if len(it["timm"]) > 1
                                                     else {})} if it["timm"] else {}),
                "export_seconds": round(time.time() - t0, 2),
                "constant_folding": it["family"] not in NO_FOLD,
            }
            writer.add(entry)
            hashes[h] = gid
            fail.pop(gid, None)
            counts["ok"] += 1
            print(f"[{i + 1}/{len(items)}] {gid}: {entry['nodes']} nodes, {totals['macs'] / 1e9:.3f} GMACs, "
                  f"{totals['params'] / 1e6:.2f} M params, {time.time() - t0:.1f} s", flush=True)
        except Exception as e:  # recorded, never silent
            counts["fail"] += 1
            msg = f"{type(e).__name__}: {(str(e).strip().splitlines() or [''])[0][:300]}"
            fail[gid] = {"error": msg, "where": traceback.format_exc().strip().splitlines()[-3:]}
            if os.path.exists(path):
                os.remove(path)
            print(f"[{i + 1}/{len(items)}] {gid}: FAILED {msg}", flush=True)
        if sum(counts.values()) % args.close_every == 0:
            gc.collect()  # (per graph it costs ~10% of a small export)
            writer.close()
            save_failures(dict(fail, _duplicates=dups))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--resume", action="store_true", help="skip ids already in the manifest (file present), "
                                                         "duplicates and recorded failures")
    ap.add_argument("--families", default="", help="comma-separated families (default: all)")
    ap.add_argument("--ids", default="", help="comma-separated ids (default: all)")
    ap.add_argument("--limit", type=int, default=0, help="export at most this many graphs")
    ap.add_argument("--retry-failed", action="store_true", help="with --resume: try recorded failures again")
    ap.add_argument("--list", action="store_true", help="print the plan and stop")
    ap.add_argument("--close-every", type=int, default=10, help="rewrite the manifest every N graphs")
    args = ap.parse_args()

    torch.set_num_threads(1)
    # A kill (SIGTERM) unwinds through the finally below, so the manifest is closed with what is done.
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(143))
    items = plan()
    if args.families:
        fams = set(args.families.split(","))
        items = [it for it in items if it["family"] in fams]
    if args.ids:
        ids = set(args.ids.split(","))
        items = [it for it in items if it["id"] in ids]
    if args.list:
        per = {}
        for it in items:
            per[it["family"]] = per.get(it["family"], 0) + 1
        for it in items:
            print(f"{it['id']:60s} {it['family']:16s} cost {it['cost']:.2f} timm {','.join(it['timm'])}")
        print(json.dumps(per, sort_keys=True), len(items), "planned")
        return 0

    os.makedirs(OUT, exist_ok=True)
    fail = load_failures()
    dups = fail.pop("_duplicates", {})
    if not (args.families or args.ids):  # forget records of ids the plan no longer has
        planned = {it["id"] for it in items}
        fail = {k: v for k, v in fail.items() if k in planned}
        dups = {k: v for k, v in dups.items() if k in planned}
    writer = zm.ManifestWriter(GENERATOR)
    builder_of = {it["id"]: it["config"]["builder"] for it in items}
    for gid, other in list(dups.items()):  # a torchvision model recorded as a copy of a variant: redo it
        if builder_of.get(gid) == "torchvision" and other in writer.entries and \
                writer.entries[other]["config"]["builder"] != "torchvision":
            del dups[gid]
    hashes = {e["structure_hash"]: e["id"] for e in writer.entries.values()}
    if args.resume:
        skip = set(dups) | (set() if args.retry_failed else set(fail))
        items = [it for it in items if not writer.done(it["id"]) and it["id"] not in skip]
    if args.limit:
        items = items[:args.limit]
    print(f"{len(items)} graphs to export", flush=True)
    counts = {"ok": 0, "dup": 0, "fail": 0}
    t_start = time.time()
    try:
        run_items(items, args, writer, hashes, fail, dups, counts)
    finally:
        writer.close()
        save_failures(dict(fail, _duplicates=dups))
    n_ok, n_dup, n_fail = counts["ok"], counts["dup"], counts["fail"]
    per = {}
    for e in writer.entries.values():
        per[e["family"]] = per.get(e["family"], 0) + 1
    print(f"this run: {n_ok} exported, {n_dup} duplicates, {n_fail} failed, {time.time() - t_start:.0f} s")
    print(f"manifest: {len(writer.entries)} distinct graphs; per family {json.dumps(per, sort_keys=True)}")
    print(f"failures recorded: {len(fail)}; duplicates recorded: {len(dups)} ({FAILURES})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
