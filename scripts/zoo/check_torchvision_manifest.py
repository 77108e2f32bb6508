"""Check the committed torchvision zoo manifest (scripts/zoo/manifests/torchvision.jsonl).

    /usr/bin/python3 -m scripts.zoo.check_torchvision_manifest [--no-files] [--min-graphs 1500]

  * every line has the manifest.py schema fields, ids are unique and the file stem is the id;
  * structure hashes are unique (the manifest holds distinct graphs only);
  * every file exists under scripts/zoo/out/ (skip with --no-files on a checkout without the exports);
  * bind is {"batch": 1} and the input is ["batch", 3, S, S] with S the config's image_size;
  * default-resolution entries (torchvision's own builders at the crop size of their reference weights):
    MACs within 1% of torchvision's published `_ops` and params within 1% of its num_params
    (scripts/zoo/torchvision_reference.csv), torchvision's num_params less the auxiliary heads that never
    run in eval (inception_v3, googlenet: read from scripts/zoo/out/manifest.json when present);
    where out/manifest.json has a PyTorch-side MAC count, MACs within 1% of it too;
  * names.timm: the timm name has a row in timm_benchmarks_long.csv.gz at the entry's image size;
  * at least --min-graphs entries.
Exit 1 when a check fails (every failure is printed), 0 otherwise.
"""
from __future__ import annotations

import argparse
import csv
import gzip
import json
import os
import sys
from collections import Counter

from scripts import paths
from scripts.zoo import manifest as zm

PATH = os.path.join(zm.MANIFEST_DIR, "torchvision.jsonl")
REFERENCE = os.path.join(paths.ZOO, "torchvision_reference.csv")
OLD_MANIFEST = os.path.join(zm.OUT_DIR, "manifest.json")
TIMM_CSV = paths.shared("timm_benchmarks_long.csv.gz")
FIELDS = ["id", "file", "family", "variant", "config", "opset", "inputs", "bind", "macs", "flops", "params",
          "nodes", "activations", "structure_hash", "names"]
BAR = 0.01
AUX_HEADS = ("AuxLogits", "aux1", "aux2")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--no-files", action="store_true", help="do not require the ONNX files")
    ap.add_argument("--min-graphs", type=int, default=1500)
    args = ap.parse_args()

    errors: list[str] = []
    with open(PATH) as f:
        entries = [json.loads(line) for line in f if line.strip()]
    ids = Counter(e["id"] for e in entries)
    errors += [f"id {i} appears {n} times" for i, n in ids.items() if n > 1]
    hashes: dict[str, list[str]] = {}
    missing = 0
    for e in entries:
        absent = [k for k in FIELDS if k not in e]
        if absent:
            errors.append(f"{e['id']}: missing fields {absent}")
            continue
        hashes.setdefault(e["structure_hash"], []).append(e["id"])
        if e["file"] != f"torchvision/{e['id']}.onnx":
            errors.append(f"{e['id']}: file {e['file']} does not match the id")
        if not args.no_files and not os.path.exists(os.path.join(zm.OUT_DIR, e["file"])):
            missing += 1
        s = e["config"]["image_size"]
        if e["bind"] != {"batch": 1} or list(e["inputs"].values()) != [["batch", 3, s, s]]:
            errors.append(f"{e['id']}: bind {e['bind']} / inputs {e['inputs']} not batch-symbolic at {s} px")
        if not (e["macs"] > 0 and e["params"] > 0 and e["nodes"] > 0):
            errors.append(f"{e['id']}: empty totals")
    if missing:
        errors.append(f"{missing} files missing under {zm.OUT_DIR} (regenerate, or --no-files)")
    errors += [f"structure_hash shared by {v}" for v in hashes.values() if len(v) > 1]

    # Default-resolution entries against published figures.
    old = {}
    if os.path.exists(OLD_MANIFEST):
        with open(OLD_MANIFEST) as f:
            old = json.load(f).get("models", {})
    by_id = {e["id"]: e for e in entries}
    compared = 0
    with open(REFERENCE) as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    for r in rows:
        e = by_id.get(f"{r['model']}_r{r['img_size']}")
        if e is None:
            print(f"  note: {r['model']} at {r['img_size']} px not in the manifest")
            continue
        compared += 1
        ref_macs = float(r["ops_gmacs"]) * 1e9
        tol = max(BAR, 0.0005e9 / ref_macs)  # published to 0.001 G
        d = e["macs"] / ref_macs - 1
        if abs(d) > tol:
            errors.append(f"{e['id']}: MACs {e['macs'] / 1e9:.4f} G vs published {r['ops_gmacs']} ({d:+.2%})")
        expected = int(r["num_params"])
        aux = sum(n for k, n in old.get(r["model"], {}).get("unused_in_eval_params", {}).items()
                  if k.split(".")[0] in AUX_HEADS)
        if aux and e["params"] != expected:
            expected -= aux
        d = e["params"] / expected - 1
        if abs(d) > BAR:
            errors.append(f"{e['id']}: params {e['params']} vs {expected} ({d:+.2%})")
        tm = old.get(r["model"], {}).get("torch_macs")
        if tm and old[r["model"]].get("input_size") == int(r["img_size"]) and abs(e["macs"] / tm - 1) > BAR:
            errors.append(f"{e['id']}: MACs {e['macs']} vs PyTorch-side count {tm}")

    # timm names.
    tsizes: dict[str, set[int]] = {}
    with gzip.open(TIMM_CSV, "rt") as f:
        for r in csv.DictReader(f):
            tsizes.setdefault(r["model"], set()).add(int(r["img_size"]))
    named = 0
    for e in entries:
        for t in [e["names"].get("timm")] + e["names"].get("timm_aliases", []):
            if t is None:
                continue
            named += 1
            if e["config"]["image_size"] not in tsizes.get(t, set()):
                errors.append(f"{e['id']}: timm {t} has no row at {e['config']['image_size']} px")

    if len(entries) < args.min_graphs:
        errors.append(f"{len(entries)} graphs, fewer than {args.min_graphs}")
    fams = Counter(e["family"] for e in entries)
    print(f"{len(entries)} graphs, {len(hashes)} distinct structure hashes, {compared} default-resolution "
          f"entries compared with published figures, {named} timm names checked")
    print("per family: " + ", ".join(f"{k} {v}" for k, v in sorted(fams.items())))
    for err in errors:
        print("FAIL " + err)
    print("OK" if not errors else f"{len(errors)} failures")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
