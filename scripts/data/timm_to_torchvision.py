"""timm model names (timm_benchmarks_long) <-> torchvision architectures, confirmed by numbers.

Use the mapping (no torch needed):

    from scripts.data.timm_to_torchvision import load_map, load_evidence
    load_map()                      # {'resnet50': 'resnet50', 'vit_base_patch16_224': 'vit_b_16', ...}
    load_map(reverse=True)          # torchvision -> [timm names]
    load_evidence()                 # the full JSON: confirmed pairs and rejected candidates with numbers

Rebuild the JSON (needs torch + torchvision; reads ../shared/data/public/timm_benchmarks_long.csv.gz):

    /usr/bin/python3 -m scripts.data.timm_to_torchvision            # writes scripts/data/timm_torchvision_map.json

Criterion. A candidate pair (chosen by name, listed in CANDIDATES) is confirmed when
  1. parameters agree within 1 %: timm's param_count (millions, 2 decimals, from the benchmark CSV) vs the
     parameter count of the torchvision model constructed with weights=None (1000 classes); and
  2. activations agree within 1 % (after +-0.005 M for timm's 2-decimal rounding): timm's `macts` (fvcore
     ActivationCountAnalysis: output elements of every convolution / matrix product) at an image size present
     in the CSV vs the same count on the torchvision model at that size (ATen dispatch on the meta device).
Check 2 pins the layout: it catches pairs with (nearly) equal parameters but a different network, e.g. timm
resnet50d (deep stem + avg-pool shortcut: +0.09 % params, +7.2 % activations) or regnety_080 vs torchvision's
retrained regnet_y_8gf (-0.5 % params, -8.9 % activations). MACs are recorded too but not used as a gate: timm's
`gmacs` (fvcore FlopCountAnalysis) also counts normalisation and pooling, which adds 0-7 % on depthwise-heavy
networks (mobilenet, mnasnet, efficientnet) and ~0.1-1 % elsewhere.
"""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Optional

from scripts.cli import no_options

MAP_PATH = Path(__file__).with_name("timm_torchvision_map.json")
PARAM_TOL = 0.01
ACT_TOL = 0.01
ROUNDING = 0.005  # timm macts (millions) and gmacs are printed with 2 decimals

# (timm name, torchvision name, torchvision constructor kwargs, note)
CANDIDATES: list[tuple[str, str, dict, str]] = [
    *[(f"resnet{d}", f"resnet{d}", {}, "timm ResNet 'default' = torchvision v1.5 layout (stride in the 3x3 conv)")
      for d in (18, 34, 50, 101, 152)],
    ("resnet50d", "resnet50", {}, "counter-example: timm 'd' = deep 3-conv stem + avg-pool downsample shortcut"),
    ("resnet50c", "resnet50", {}, "counter-example: timm 'c' = deep stem"),
    ("resnet50t", "resnet50", {}, "counter-example: timm 't' = tiered deep stem"),
    ("resnext50_32x4d", "resnext50_32x4d", {}, ""),
    ("resnext101_32x8d", "resnext101_32x8d", {}, ""),
    ("resnext101_64x4d", "resnext101_64x4d", {}, ""),
    ("wide_resnet50_2", "wide_resnet50_2", {}, ""),
    ("wide_resnet101_2", "wide_resnet101_2", {}, ""),
    *[(v, v, {}, "") for v in ("vgg11", "vgg11_bn", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn", "vgg19", "vgg19_bn")],
    *[(f"densenet{d}", f"densenet{d}", {}, "") for d in (121, 161, 169, 201)],
    ("mobilenetv2_100", "mobilenet_v2", {}, ""),
    ("mobilenetv3_large_100", "mobilenet_v3_large", {},
     "same blocks (hard-swish, SE with hard-sigmoid gate, make_divisible(exp/4, 8) squeeze); timm's head is a 1x1 "
     "conv after pooling where torchvision uses Linear - same MACs/params"),
    ("mobilenetv3_small_100", "mobilenet_v3_small", {}, "as mobilenetv3_large_100"),
    ("mnasnet_050", "mnasnet0_5", {}, ""),
    ("mnasnet_075", "mnasnet0_75", {}, ""),
    ("mnasnet_100", "mnasnet1_0", {}, ""),
    ("mnasnet_b1", "mnasnet1_0", {}, "timm alias of mnasnet_100"),
    ("mnasnet_140", "mnasnet1_3", {}, "counter-example: width 1.4 vs 1.3"),
    *[(f"efficientnet_b{i}", f"efficientnet_b{i}", {}, "") for i in range(8)],
    *[(f"tf_efficientnet_b{i}", f"efficientnet_b{i}", {},
       "TF port: same layers, but TF 'SAME' (input-size dependent, asymmetric) padding instead of symmetric padding")
      for i in range(8)],
    ("efficientnetv2_s", "efficientnet_v2_s", {}, ""),
    ("efficientnetv2_m", "efficientnet_v2_m", {}, ""),
    ("efficientnetv2_l", "efficientnet_v2_l", {}, ""),
    ("tf_efficientnetv2_s", "efficientnet_v2_s", {}, "TF port ('SAME' padding)"),
    ("tf_efficientnetv2_m", "efficientnet_v2_m", {}, "TF port ('SAME' padding)"),
    ("tf_efficientnetv2_l", "efficientnet_v2_l", {}, "TF port ('SAME' padding)"),
    ("regnetx_004", "regnet_x_400mf", {}, "pycls RegNetX-400MF vs torchvision's retrained config"),
    ("regnetx_004_tv", "regnet_x_400mf", {}, "timm copy of the torchvision config"),
    ("regnetx_008", "regnet_x_800mf", {}, ""),
    ("regnetx_016", "regnet_x_1_6gf", {}, ""),
    ("regnetx_032", "regnet_x_3_2gf", {}, ""),
    ("regnetx_080", "regnet_x_8gf", {}, ""),
    ("regnetx_160", "regnet_x_16gf", {}, ""),
    ("regnetx_320", "regnet_x_32gf", {}, ""),
    ("regnety_004", "regnet_y_400mf", {}, ""),
    ("regnety_008", "regnet_y_800mf", {}, ""),
    ("regnety_008_tv", "regnet_y_800mf", {}, "timm copy of the torchvision config"),
    ("regnety_016", "regnet_y_1_6gf", {}, ""),
    ("regnety_032", "regnet_y_3_2gf", {}, ""),
    ("regnety_080", "regnet_y_8gf", {}, ""),
    ("regnety_080_tv", "regnet_y_8gf", {}, "timm copy of the torchvision config"),
    ("regnety_160", "regnet_y_16gf", {}, ""),
    ("regnety_320", "regnet_y_32gf", {}, ""),
    ("regnety_1280", "regnet_y_128gf", {}, ""),
    ("convnext_tiny", "convnext_tiny", {}, ""),
    ("convnext_small", "convnext_small", {}, ""),
    ("convnext_base", "convnext_base", {}, ""),
    ("convnext_large", "convnext_large", {}, ""),
    ("vit_base_patch16_224", "vit_b_16", {}, ""),
    ("vit_base_patch32_224", "vit_b_32", {}, ""),
    ("vit_large_patch16_224", "vit_l_16", {}, ""),
    ("vit_large_patch32_224", "vit_l_32", {}, ""),
    ("vit_huge_patch14_224", "vit_h_14", {}, "torchvision's pretrained weights run at 518 px; constructed here at 224"),
    ("swin_tiny_patch4_window7_224", "swin_t", {}, ""),
    ("swin_small_patch4_window7_224", "swin_s", {}, ""),
    ("swin_base_patch4_window7_224", "swin_b", {}, ""),
    ("inception_v3", "inception_v3", {"aux_logits": False, "init_weights": False},
     "torchvision's published num_params (27.16 M) includes the AuxLogits head; compared without it"),
    ("maxvit_tiny_tf_224", "maxvit_t", {}, ""),
]


# ------------------------------------------------------------------------------------------------
def load_evidence(path: Path = MAP_PATH) -> dict:
    with open(path) as f:
        return json.load(f)


def load_map(reverse: bool = False, path: Path = MAP_PATH) -> dict:
    """Confirmed pairs only. timm -> torchvision, or torchvision -> [timm names] with reverse=True."""
    ev = load_evidence(path)
    pairs = [(p["timm"], p["torchvision"]) for p in ev["confirmed"]]
    if not reverse:
        return dict(pairs)
    out: dict[str, list[str]] = {}
    for t, v in pairs:
        out.setdefault(v, []).append(t)
    return out


# ------------------------------------------------------------------------------------------------
def _count_macs(model, img: int) -> tuple[int, int]:
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    aten = torch.ops.aten

    def numel(shape):
        return int(math.prod(shape))

    def conv(args, out):
        w = args[1]
        transposed = bool(args[6]) if len(args) > 6 else False
        return numel(args[0].shape) * numel(w.shape[1:]) if transposed else numel(out.shape) * numel(w.shape[1:])

    rules = {
        aten.convolution.default: conv,
        aten.mm.default: lambda a, o: numel(o.shape) * a[0].shape[-1],
        aten.addmm.default: lambda a, o: numel(o.shape) * a[1].shape[-1],
        aten.bmm.default: lambda a, o: numel(o.shape) * a[0].shape[-1],
        aten.baddbmm.default: lambda a, o: numel(o.shape) * a[1].shape[-1],
    }

    class Count(TorchDispatchMode):
        macs = 0
        acts = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            r = rules.get(func)
            if r is not None:
                Count.macs += r(args, out)
                Count.acts += numel(out.shape)  # fvcore ActivationCountAnalysis = timm 'macts'
            return out

    model.eval()
    # Shapes are all that is counted, so run on the meta device (no arithmetic); fall back to CPU if an op
    # has no meta kernel. Autograd stays on: nn.MultiheadAttention then takes its decomposed path
    # (addmm + bmm) rather than the fused inference kernel.
    try:
        m = model.to("meta")
        with Count():
            m(torch.empty(1, 3, img, img, device="meta"))
        return Count.macs, Count.acts
    except (NotImplementedError, RuntimeError):
        Count.macs = Count.acts = 0
        model = model.to_empty(device="cpu") if hasattr(model, "to_empty") else model
        with Count():
            model(torch.randn(1, 3, img, img))
        return Count.macs, Count.acts


def _timm_rows(csv_path: Path):
    import pandas as pd
    t = pd.read_csv(csv_path)
    t = t[t["mode"] == "infer"]
    return t


def build(csv_path: Optional[Path] = None, out_path: Path = MAP_PATH) -> dict:
    import torch
    import torchvision
    from torchvision import models as tvm

    from scripts.data import sources

    csv_path = csv_path or sources._path("timm_benchmarks_long.csv.gz")
    t = _timm_rows(csv_path)
    torch.manual_seed(0)
    confirmed, rejected = [], []
    for timm_name, tv_name, kwargs, note in CANDIDATES:
        rec = {"timm": timm_name, "torchvision": tv_name, "note": note}
        rows = t[t.model == timm_name]
        if rows.empty:
            rec["reason"] = "timm model not in timm_benchmarks_long"
            rejected.append(rec)
            continue
        if tv_name not in tvm.list_models():
            rec["reason"] = f"not in the installed torchvision {torchvision.__version__}"
            rejected.append(rec)
            continue
        builder = tvm.get_model_builder(tv_name) if hasattr(tvm, "get_model_builder") else getattr(tvm, tv_name)
        model = builder(weights=None, **kwargs)
        tv_params = sum(p.numel() for p in model.parameters())
        try:
            meta = tvm.get_model_weights(tv_name)
            tv_meta = next(iter(meta)).meta.get("num_params")
        except Exception:  # noqa: BLE001
            tv_meta = None
        p_all = sorted(set(float(x) for x in rows.param_count_M.dropna()))
        p_best = min(p_all, key=lambda v: abs(v * 1e6 - tv_params))
        p_rel = (p_best * 1e6 - tv_params) / tv_params
        g = rows.dropna(subset=["macts_M"])
        img = timm_g = timm_a = tv_g = tv_a = None
        a_all = []
        if not g.empty:
            sizes = sorted(set(int(x) for x in g.img_size))
            img = 224 if 224 in sizes else (299 if 299 in sizes else sizes[0])
            gi = g[g.img_size == img]
            a_all = sorted(set(float(x) for x in gi.macts_M))
            macs, acts = _count_macs(model, img)
            tv_g, tv_a = macs / 1e9, acts / 1e6
            best = gi.iloc[(gi.macts_M - tv_a).abs().argsort()[:1]]
            timm_a, timm_g = float(best.macts_M.iloc[0]), float(best.gmacs.iloc[0])
        del model
        a_rel = None if tv_a is None else (timm_a - tv_a) / tv_a
        g_rel = None if tv_g is None else (timm_g - tv_g) / tv_g
        rec.update({
            "timm_params_M": p_best, "timm_params_M_all_versions": p_all, "tv_params": int(tv_params),
            "tv_meta_num_params": tv_meta, "params_rel_diff": round(p_rel, 5), "img_size": img,
            "timm_macts_M": timm_a, "timm_macts_M_all_versions": a_all,
            "tv_macts_M": None if tv_a is None else round(tv_a, 4),
            "macts_rel_diff": None if a_rel is None else round(a_rel, 5),
            "timm_gmacs": timm_g, "tv_gmacs": None if tv_g is None else round(tv_g, 4),
            "gmacs_rel_diff": None if g_rel is None else round(g_rel, 4),
        })
        ok_p = abs(p_rel) <= PARAM_TOL
        ok_a = tv_a is not None and max(0.0, abs(timm_a - tv_a) - ROUNDING) / tv_a <= ACT_TOL
        if ok_p and ok_a:
            rec["confirmed"] = True
            confirmed.append(rec)
        else:
            rec["confirmed"] = False
            why = []
            if not ok_p:
                why.append(f"params differ by {100 * p_rel:+.2f}% (> {100 * PARAM_TOL:.0f}%)")
            if tv_a is None:
                why.append("no timm macts to compare")
            elif not ok_a:
                why.append(f"activations differ by {100 * a_rel:+.2f}% (> {100 * ACT_TOL:.0f}%)")
            rec["reason"] = "; ".join(why)
            rejected.append(rec)
        print(f"{'OK ' if rec['confirmed'] else 'NO '} {timm_name:32s} {tv_name:20s} "
              f"params {rec['params_rel_diff']:+.4f} macts {rec['macts_rel_diff']} gmacs {rec['gmacs_rel_diff']} "
              f"{rec.get('reason', '')}", flush=True)
    ev = {
        "generated_by": "/usr/bin/python3 -m scripts.data.timm_to_torchvision",
        "source": "timm_benchmarks_long.csv.gz (huggingface/pytorch-image-models results/benchmark-*.csv)",
        "torch": torch.__version__, "torchvision": torchvision.__version__,
        "criterion": f"|params rel diff| <= {PARAM_TOL:.0%} and (|macts diff| - {ROUNDING} M) / tv macts <= "
                     f"{ACT_TOL:.0%} (torchvision built with weights=None; activations = output elements of conv / "
                     f"matmul ops, counted at the timm row's image size); gmacs recorded, not gated",
        "confirmed": confirmed, "rejected": rejected,
    }
    with open(out_path, "w") as f:
        json.dump(ev, f, indent=1)
        f.write("\n")
    print(f"wrote {out_path}: {len(confirmed)} confirmed, {len(rejected)} rejected")
    return ev


if __name__ == "__main__":
    no_options(__doc__)
    from scripts.data import sources as _s

    if not _s.data_available():
        print(_s.missing_message(), file=sys.stderr)
        sys.exit(2)
    build()
