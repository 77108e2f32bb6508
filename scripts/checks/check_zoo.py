"""Check PerfCard's totals on the exported model zoo against published reference figures.

    /usr/bin/python3 -m scripts.checks.check_zoo [--cli build/native/core/perfcard] [--only a,b] [--no-timm]

Needs the zoo exported first (scripts/zoo/export_torchvision.py, scripts/zoo/export_bert.py; they
write scripts/zoo/out/). For every exported model it runs `perfcard analyze MODEL --dim batch=1 --json
--per-node` and prints one row:

  * torchvision bar: our MACs within 1% of torchvision's published `_ops` (scripts/zoo/
    torchvision_reference.csv, which cites where each value comes from) and our params within 1% of
    its num_params.
  * timm bar, where timm_benchmarks_long.csv.gz has a row of the same architecture at the same input
    size: our MACs within 2% of its gmacs, our activations within 5% of its macts.
  * BERT-base: params 109.5M +-0.5%.

Published figures are rounded (torchvision to 0.001 G, timm to 0.01 G / 0.01 M). Where half a unit
of that rounding is larger than the bar, the bar becomes the rounding error, and the row says so.

timm's gmacs come from fvcore's FlopCountAnalysis, which besides convolutions and matrix products
adds 2 per BatchNorm output element in eval mode (1 without affine), 5 per LayerNorm element and 1 per
input element of adaptive average pooling. PerfCard's MACs are products only (like torchvision's
`_ops`). The row therefore also shows "fv-eq", our MACs plus those terms computed from our own
per-node shapes; a row whose plain MACs miss the 2% bar but whose fv-eq meets it is PASS with the
note "fvcore terms", never silently.

The "torch" column is an independent count made in PyTorch at export time (scripts/zoo/torch_count.py,
dispatch-level, the way torchvision computed `_ops`): a difference there points at a PerfCard bug.

The timm table is read where it lives, in ../shared/data/public/ beside the repository checkout
(read-only reference data; never copied into the repo). Exit status: 0 when every bar is met,
1 when one is missed, 2 when inputs are missing.
"""
from __future__ import annotations

import argparse
import csv
import gzip
import json
import math
import os
import subprocess
import sys
from collections import Counter

from scripts import paths

OUT = paths.ZOO_OUT
REFERENCE = os.path.join(paths.ZOO, "torchvision_reference.csv")
TIMM_CSV = paths.shared("timm_benchmarks_long.csv.gz")

TV_BAR = 0.01
TIMM_MAC_BAR = 0.02
TIMM_ACT_BAR = 0.05
BERT_PARAMS = 109.5e6
BERT_BAR = 0.005
TIMM_SAME_PARAMS = 0.005  # a timm row is "same architecture" only if its param count agrees this well

# torchvision name -> timm name, where timm's model is the same architecture. The row is used only if
# timm benchmarked it at our input size and its param_count agrees with torchvision's.
TIMM_NAME = {
    **{n: n for n in ["resnet18", "resnet34", "resnet50", "resnet101", "resnet152", "resnext50_32x4d",
                      "resnext101_32x8d", "resnext101_64x4d", "wide_resnet50_2", "wide_resnet101_2",
                      "vgg11", "vgg11_bn", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn", "vgg19", "vgg19_bn",
                      "densenet121", "densenet161", "densenet169", "densenet201",
                      "efficientnet_b0", "efficientnet_b1", "efficientnet_b2", "efficientnet_b3",
                      "efficientnet_b4", "efficientnet_b5", "efficientnet_b6", "efficientnet_b7",
                      "convnext_tiny", "convnext_small", "convnext_base", "convnext_large"]},
    "mobilenet_v2": "mobilenetv2_100",
    "mobilenet_v3_large": "mobilenetv3_large_100",
    "mobilenet_v3_small": "mobilenetv3_small_100",
    "mnasnet0_5": "mnasnet_050",
    "mnasnet0_75": "mnasnet_075",
    "mnasnet1_0": "mnasnet_100",
    "efficientnet_v2_s": "efficientnetv2_s",
    "efficientnet_v2_m": "efficientnetv2_m",
    "efficientnet_v2_l": "efficientnetv2_l",
    "vit_b_16": "vit_base_patch16_224",
    "vit_b_32": "vit_base_patch32_224",
    "vit_l_16": "vit_large_patch16_224",
    "vit_l_32": "vit_large_patch32_224",
    "vit_h_14": "vit_huge_patch14_224",
    "swin_t": "swin_tiny_patch4_window7_224",
    "swin_s": "swin_small_patch4_window7_224",
    "swin_b": "swin_base_patch4_window7_224",
    "swin_v2_t": "swinv2_tiny_window8_256",
    "swin_v2_s": "swinv2_small_window8_256",
    "swin_v2_b": "swinv2_base_window8_256",
    "maxvit_t": "maxvit_tiny_tf_224",
    "inception_v3": "inception_v3",
    # torchvision's RegNets: timm's pycls ports, or the "_tv" variants where torchvision's differ
    "regnet_x_400mf": "regnetx_004_tv", "regnet_x_800mf": "regnetx_008", "regnet_x_1_6gf": "regnetx_016",
    "regnet_x_3_2gf": "regnetx_032", "regnet_x_8gf": "regnetx_080", "regnet_x_16gf": "regnetx_160",
    "regnet_x_32gf": "regnetx_320", "regnet_y_400mf": "regnety_004", "regnet_y_800mf": "regnety_008_tv",
    "regnet_y_1_6gf": "regnety_016", "regnet_y_3_2gf": "regnety_032", "regnet_y_8gf": "regnety_080_tv",
    "regnet_y_16gf": "regnety_160", "regnet_y_32gf": "regnety_320", "regnet_y_128gf": "regnety_1280",
}


# Both tables round to a fixed number of decimals (and drop trailing zeros: timm's "0.4" is 0.40).
TV_DECIMALS = 3    # torchvision _ops, in G
TIMM_DECIMALS = 2  # timm gmacs (G), macts (M)


def half_unit(decimals: int) -> float:
    return 0.5 * 10 ** (-decimals)


def pct(ours: float, ref: float) -> float:
    return (ours - ref) / ref * 100.0


def load_reference() -> dict:
    rows = {}
    with open(REFERENCE) as f:
        lines = [l for l in f if not l.startswith("#")]
    for r in csv.DictReader(lines):
        rows[r["model"]] = r
    return rows


def load_timm() -> dict:
    """(model, img_size) -> {gmacs, macts, params, texts...}: the value most common among the
    inference rows made with torch 1.13 (the version that exported our graphs: attention is explicit
    matrix products there, while torch 2.x rows of some models miss fused attention), else among all."""
    by_key: dict = {}
    with gzip.open(TIMM_CSV, "rt") as f:
        for r in csv.DictReader(f):
            if r["mode"] != "infer" or not r["gmacs"] or not r["macts_M"]:
                continue
            key = (r["model"], int(r["img_size"]))
            by_key.setdefault(key, []).append(r)
    out = {}
    for key, rs in by_key.items():
        pool = [r for r in rs if r["torch"] == "113"] or rs
        (g, a, p), _ = Counter((r["gmacs"], r["macts_M"], r["param_count_M"]) for r in pool).most_common(1)[0]
        out[key] = {"gmacs": g, "macts": a, "params": p, "torch": pool[0]["torch"] if pool else ""}
    return out


def run_cli(cli: str, path: str, dims: list[str]) -> dict:
    cmd = [cli, "analyze", path, "--json", "--per-node"]
    for d in dims:
        cmd += ["--dim", d]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()[:300]}")
    return json.loads(p.stdout)


def numel(shape) -> int:
    if not shape or any((not isinstance(d, int)) or d < 0 for d in shape):
        return 0
    return math.prod(shape)


def fvcore_extras(doc: dict) -> float:
    """fvcore's non-product terms, from our per-node shapes (see the module docstring)."""
    extra = 0.0
    for n in doc.get("nodes", []):
        op = n["op_type"]
        outs = n.get("outputs") or [{}]
        ins = n.get("inputs") or [{}]
        if op == "BatchNormalization":
            extra += 2 * numel(outs[0].get("shape"))
        elif op == "LayerNormalization":
            extra += 5 * numel(outs[0].get("shape"))
        elif op == "GlobalAveragePool":
            extra += numel(ins[0].get("shape"))
    return extra


class Row:
    def __init__(self, model: str):
        self.model = model
        self.cells: dict = {}
        self.fails: list[str] = []
        self.notes: list[str] = []

    def check(self, label: str, ours: float, ref: float, ref_text: str, bar: float, scale: float,
              decimals: int) -> str:
        """Compare ours against a published figure ref_text, given in units of `scale` rounded to
        `decimals` decimals."""
        tol = max(bar, half_unit(decimals) * scale / ref) if ref else bar
        d = pct(ours, ref)
        ok = abs(d) <= tol * 100 + 1e-9
        if tol > bar:
            self.notes.append(f"{label}: published {ref_text} is rounded, bar widened to +-{tol * 100:.1f}%")
        if not ok:
            self.fails.append(f"{label} {d:+.2f}% (bar {tol * 100:.1f}%)")
        return f"{d:+.2f}%"


def check_torchvision(name: str, rec: dict, doc: dict, ref: dict | None, timm: dict | None, row: Row) -> None:
    t = doc["totals"]
    macs, params, acts = t["macs"], t["params"], t["activations"]
    row.cells["size"] = str(rec["input_size"])
    row.cells["macs"] = f"{macs / 1e9:.3f}"
    row.cells["params"] = f"{params / 1e6:.3f}"
    if t.get("unknown_nodes") or t.get("uncosted_nodes"):
        row.fails.append(f"{t.get('unknown_nodes', 0)} unknown / {t.get('uncosted_nodes', 0)} uncosted nodes")
    if "torch_macs" in rec:
        row.cells["d_torch"] = f"{pct(macs, rec['torch_macs']):+.2f}%"
        if abs(pct(macs, rec["torch_macs"])) > 0.1:
            row.notes.append(f"MACs differ from the PyTorch-side count {rec['torch_macs'] / 1e9:.4f} G")
    if ref is None:
        row.notes.append("no torchvision reference figure")
    else:
        if int(ref["img_size"]) != rec["input_size"]:
            row.fails.append(f"reference is at {ref['img_size']} px, export at {rec['input_size']} px")
        row.cells["tv_ops"] = ref["ops_gmacs"]
        row.cells["d_tv_macs"] = row.check("tv MACs", macs, float(ref["ops_gmacs"]) * 1e9, ref["ops_gmacs"], TV_BAR, 1e9, TV_DECIMALS)
        expected = int(ref["num_params"])
        unused = rec.get("unused_in_eval_params", {})
        aux = {k: v for k, v in unused.items() if k.split(".")[0] in ("AuxLogits", "aux1", "aux2")}
        if aux and expected == rec.get("constructed_num_params") and params != expected:
            n_aux = sum(aux.values())
            expected -= n_aux
            row.notes.append(f"torchvision's num_params includes {n_aux} params of the auxiliary head "
                             f"({', '.join(sorted({k.split('.')[0] for k in aux}))}) that never runs in eval, "
                             f"so no eval graph holds them: compared with {expected}")
        row.cells["tv_params"] = f"{int(ref['num_params']) / 1e6:.3f}"
        d = pct(params, expected)
        row.cells["d_tv_params"] = f"{d:+.2f}%"
        if abs(d) > TV_BAR * 100:
            row.fails.append(f"tv params {d:+.2f}%")
    tname = TIMM_NAME.get(name)
    if tname and timm is not None:
        tr = timm.get((tname, rec["input_size"]))
        if tr is None:
            sizes = sorted(s for (m, s) in timm if m == tname)
            row.notes.append(f"timm {tname}: no row at {rec['input_size']} px (has {sizes or 'none'})")
        elif abs(float(tr["params"]) * 1e6 - params) / params > TIMM_SAME_PARAMS and \
                abs(float(tr["params"]) * 1e6 - float(ref["num_params"] if ref else params)) / params > TIMM_SAME_PARAMS:
            row.notes.append(f"timm {tname}: param_count {tr['params']} M differs from ours: not the same "
                             "architecture, not compared")
        else:
            row.cells["timm"] = tname
            row.cells["t_gmacs"] = tr["gmacs"]
            g = float(tr["gmacs"]) * 1e9
            d_plain = pct(macs, g)
            fv = macs + fvcore_extras(doc)
            d_fv = pct(fv, g)
            tol = max(TIMM_MAC_BAR, half_unit(TIMM_DECIMALS) * 1e9 / g)
            row.cells["d_t_macs"] = f"{d_plain:+.2f}%"
            row.cells["d_t_fveq"] = f"{d_fv:+.2f}%"
            if tol > TIMM_MAC_BAR:
                row.notes.append(f"timm gmacs {tr['gmacs']} is rounded, bar widened to +-{tol * 100:.1f}%")
            if abs(d_plain) > tol * 100:
                if abs(d_fv) <= tol * 100:
                    row.notes.append(f"timm MACs: plain {d_plain:+.2f}%, with fvcore terms {d_fv:+.2f}% "
                                     "(timm's gmacs count BatchNorm/pooling, see --help)")
                else:
                    row.fails.append(f"timm MACs {d_plain:+.2f}% (fvcore-eq {d_fv:+.2f}%, bar {tol * 100:.1f}%)")
            row.cells["t_macts"] = tr["macts"]
            row.cells["acts"] = f"{acts / 1e6:.2f}"
            row.cells["d_t_acts"] = row.check("timm acts", acts, float(tr["macts"]) * 1e6, tr["macts"], TIMM_ACT_BAR, 1e6, TIMM_DECIMALS)


def check_bert(rec: dict, doc: dict, row: Row) -> None:
    t = doc["totals"]
    row.cells["size"] = f"s{rec['count_sequence']}"
    row.cells["macs"] = f"{t['macs'] / 1e9:.3f}"
    row.cells["params"] = f"{t['params'] / 1e6:.3f}"
    row.cells["d_torch"] = f"{pct(t['macs'], rec['torch_macs']):+.2f}%"
    if abs(pct(t["macs"], rec["torch_macs"])) > 0.1:
        row.fails.append(f"MACs differ from the PyTorch-side count {rec['torch_macs']}")
    if abs(pct(t["activations"], rec["torch_activations"])) > 0.1:
        row.fails.append(f"activations differ from the PyTorch-side count {rec['torch_activations']}")
    if rec["config"] == "base":
        row.cells["tv_params"] = "109.5"
        d = pct(t["params"], BERT_PARAMS)
        row.cells["d_tv_params"] = f"{d:+.2f}%"
        if abs(d) > BERT_BAR * 100:
            row.fails.append(f"BERT-base params {d:+.2f}% (bar 0.5%)")
    if t.get("unknown_nodes") or t.get("uncosted_nodes"):
        row.fails.append(f"{t.get('unknown_nodes', 0)} unknown / {t.get('uncosted_nodes', 0)} uncosted nodes")


COLUMNS = [("model", 20), ("size", 5), ("macs", 8), ("tv_ops", 7), ("d_tv_macs", 8), ("params", 8),
           ("tv_params", 9), ("d_tv_params", 8), ("d_torch", 7), ("timm", 28), ("t_gmacs", 7),
           ("d_t_macs", 8), ("d_t_fveq", 8), ("acts", 7), ("t_macts", 7), ("d_t_acts", 8), ("verdict", 7)]
HEAD = {"model": "model", "size": "px", "macs": "GMACs", "tv_ops": "tv_ops", "d_tv_macs": "dMACs",
        "params": "Mparams", "tv_params": "tv_Mpar", "d_tv_params": "dParams", "d_torch": "dTorch",
        "timm": "timm model", "t_gmacs": "gmacs", "d_t_macs": "dMACs", "d_t_fveq": "dFv-eq",
        "acts": "Macts", "t_macts": "macts", "d_t_acts": "dActs", "verdict": "verdict"}


def fmt(cells: dict) -> str:
    return " ".join(str(cells.get(k, "")).ljust(w)[:max(w, len(str(cells.get(k, ''))))] for k, w in COLUMNS)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--cli", default=paths.CLI)
    ap.add_argument("--only", default="", help="comma-separated model names")
    ap.add_argument("--no-timm", action="store_true", help="skip the timm bar explicitly")
    ap.add_argument("--verbose", action="store_true", help="print every note, also for passing rows")
    args = ap.parse_args()

    if not os.path.exists(args.cli):
        print(f"check_zoo: no PerfCard CLI at {args.cli}; build it first: "
              "cmake -S . -B build/native && cmake --build build/native -j2", file=sys.stderr)
        return 2
    manifest_path = os.path.join(OUT, "manifest.json")
    if not os.path.exists(manifest_path):
        print(f"check_zoo: no exported zoo ({manifest_path}); export it first: "
              "/usr/bin/python3 -m scripts.zoo.export_torchvision && "
              "/usr/bin/python3 -m scripts.zoo.export_bert", file=sys.stderr)
        return 2
    timm = None
    if not args.no_timm:
        if not os.path.exists(TIMM_CSV):
            print(f"check_zoo: the timm reference table {TIMM_CSV} is missing.\n"
                  "  It is read-only shared reference data that lives in shared/data/public/ beside the\n"
                  "  repository checkout (../shared relative to the repo root); it is never copied into\n"
                  "  the repo. Check out the project with its shared/ folder beside it, or pass --no-timm\n"
                  "  to skip the timm bar (the torchvision and BERT bars still run).", file=sys.stderr)
            return 2
        timm = load_timm()
    with open(manifest_path) as f:
        manifest = json.load(f)
    ref = load_reference()
    only = {n.strip() for n in args.only.split(",") if n.strip()}

    rows: list[Row] = []
    for name in sorted(manifest.get("models", {})):
        if only and name not in only:
            continue
        rec = manifest["models"][name]
        row = Row(name)
        try:
            doc = run_cli(args.cli, os.path.join(OUT, name + ".onnx"), ["batch=1"])
            check_torchvision(name, rec, doc, ref.get(name), timm, row)
        except Exception as e:
            row.fails.append(f"analysis failed: {e}")
        rows.append(row)
    for bert_json in sorted(p for p in os.listdir(OUT) if p.startswith("bert_") and p.endswith(".json")):
        with open(os.path.join(OUT, bert_json)) as f:
            rec = json.load(f)
        if only and rec["model"] not in only:
            continue
        row = Row(rec["model"])
        try:
            doc = run_cli(args.cli, os.path.join(OUT, rec["model"] + ".onnx"),
                          [f"batch={rec['count_batch']}", f"sequence={rec['count_sequence']}"])
            check_bert(rec, doc, row)
        except Exception as e:
            row.fails.append(f"analysis failed: {e}")
        rows.append(row)

    print("Columns: GMACs/Mparams/Macts = PerfCard at batch 1; tv_ops/tv_Mpar = torchvision's published "
          "_ops/num_params; d* = (ours - ref)/ref;\n  dTorch = vs the PyTorch-side count at export; "
          "timm gmacs/macts = timm_benchmarks_long (torch 1.13 rows); dFv-eq = ours + fvcore's norm/pool terms.")
    print(fmt(HEAD))
    failed = 0
    for r in rows:
        r.cells["model"] = r.model
        r.cells["verdict"] = "FAIL" if r.fails else "PASS"
        failed += bool(r.fails)
        print(fmt(r.cells))
        for f_ in r.fails:
            print(f"    FAIL: {f_}")
        if r.fails or args.verbose:
            for n in r.notes:
                print(f"    note: {n}")
    notes = [(r.model, n) for r in rows if not r.fails for n in r.notes]
    if notes and not args.verbose:
        print("\nNotes on passing rows:")
        for m, n in notes:
            print(f"  {m}: {n}")
    failed_exports = manifest.get("failed", {})
    if failed_exports:
        print("\nModels that did not export (scripts/zoo/export_torchvision.py):")
        for m, info in sorted(failed_exports.items()):
            print(f"  {m} (opset {info.get('opset')}): {info.get('error')}")
    missing = sorted(set(ref) - set(manifest.get("models", {})) - set(failed_exports))
    if missing and not only:
        print("\nReference models not in this zoo (not exported in this run, so not checked): " + ", ".join(missing))
    print(f"\n{len(rows) - failed} PASS, {failed} FAIL of {len(rows)} models"
          + ("" if timm is not None else " (timm bar skipped: --no-timm)"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
