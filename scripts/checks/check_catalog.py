"""Validate the device catalog and the carbon table (stdlib only).

    /usr/bin/python3 -m scripts.checks.check_catalog [--devices weights/devices.json]
        [--carbon weights/carbon_regions.json] [--specs ../shared/data/public/device_specs.csv]
        [--require-specs]

Checks
  weights/devices.json
    - schema_version 1; ids unique, lowercase, GPU ids exactly the canonical set plus the extra GPUs, CPU ids 'cpu-...'
    - "default_view", when present, is true/false; canonical GPUs are in the default view, the extra GPUs
      (public-measurement GPUs listed one click away) carry "default_view": false
    - every number sits in an object that carries a non-empty "source" (itself or an ancestor)
    - sourced fields are {"value": ..., "source": "..."}; "uncertain" is a bool when present
    - GPU precisions consistent with peak_tflops keys (both directions)
    - MIG: slices within the totals, max_instances * slices within the totals, max_instances equal to
      min(compute_total // compute_slices, memory_total // memory_slices) for profiles without media
      extensions (those are limited to 1), profile name agrees with its compute slices and nominal memory
      (memory_gb <= device memory * memory_slices / memory_total, allowing for the name's rounding),
      observed SM counts and GiB within the device's SM count and memory share (NVIDIA's 'GB' in
      product and profile names is binary: an '80GB' board exposes ~79-80 GiB)
  weights/carbon_regions.json
    - default region exists, codes unique, required countries and cloud regions present, every value
      sourced with a year, pue.default sourced and plausible
  cross-check against ../shared/data/public/device_specs.csv (read-only reference data)
    - prints agreement / differences per GPU and field; a difference on a field that is neither marked
      "uncertain" nor carries a note explaining it is a problem

Exit status 0 when no problem was found, 1 otherwise.
"""
import argparse
import csv
import json
import os
import re
import sys

from scripts import paths

CANONICAL_GPUS = [
    "a100-sxm4-40gb", "a100-sxm4-80gb", "a100-pcie-80gb", "h100-sxm5-80gb", "h100-pcie-80gb",
    "h200-sxm-141gb", "b200-sxm-180gb", "v100-sxm2-32gb", "l4", "t4", "a10", "a30", "l40s",
    "rtx3090", "rtx4090",
    # Beyond the list: parts the public measurements cover (NeuSight's A100-PCIE-40GB).
    "a100-pcie-40gb",
]
# GPUs that public measurement data (timm, HELP, NeuSight, ML.ENERGY, Lambda, llama.cpp, MLPerf) uses beyond the
# default list; the page and `perfcard predict` show them one click away ("default_view": false).
EXTRA_GPUS = [
    "gtx1080ti", "rtx2080ti", "titanx-pascal", "titanxp", "titan-rtx", "titan-v", "p100-pcie-16gb", "p4",
    "v100-pcie-16gb", "v100-pcie-32gb", "a40", "rtx-a6000", "rtx6000-ada", "h100-nvl", "rtx5090", "rtx-pro-6000-blackwell",
]
# device_specs.csv row for each canonical id (A30 is not in the CSV).
CSV_ROW = {
    "a100-sxm4-40gb": "A100-40GB-SXM4", "a100-sxm4-80gb": "A100-80GB-SXM4", "a100-pcie-80gb": "A100-80GB-PCIe",
    "h100-sxm5-80gb": "H100-SXM5-80GB", "h100-pcie-80gb": "H100-PCIe-80GB", "h200-sxm-141gb": "H200-SXM-141GB",
    "b200-sxm-180gb": "B200-HGX", "v100-sxm2-32gb": "V100-SXM2-16/32GB", "l4": "L4", "t4": "T4", "a10": "A10",
    "l40s": "L40S", "rtx3090": "RTX-3090", "rtx4090": "RTX-4090",
}
# catalog field path -> CSV column
CSV_FIELDS = [
    (("sm_count",), "sm_count"),
    (("peak_tflops", "fp32"), "fp32_tflops"),
    (("peak_tflops", "tf32"), "tf32_tensor_tflops_dense"),
    (("peak_tflops", "fp16"), "fp16_bf16_tensor_tflops_dense"),
    (("peak_tflops", "bf16"), "fp16_bf16_tensor_tflops_dense"),
    (("peak_tflops", "fp8"), "fp8_tensor_tflops_dense"),
    (("peak_tflops", "int8"), "int8_tensor_tops_dense"),
    (("memory_gb",), "mem_gb"),
    (("memory_bandwidth_gbs",), "mem_bw_gbs"),
    (("tdp_w",), "tdp_w"),
    (("l2_mb",), "l2_mb"),
]
TENSOR_PRECISIONS = {"fp32", "tf32", "fp16", "bf16", "fp8", "int8"}
REQUIRED_COUNTRIES = ["us", "cn", "in", "de", "fr", "gb", "jp", "kr", "ca", "br", "au", "se", "no", "pl", "za",
                      "sg", "nl", "ie", "fi", "es", "it"]
REQUIRED_CLOUD = ["aws:us-east-1", "aws:us-west-2", "aws:eu-west-1", "aws:eu-central-1", "aws:ap-northeast-1",
                  "gcp:us-central1", "gcp:europe-west4", "gcp:europe-north1", "gcp:asia-east1",
                  "azure:eastus", "azure:westeurope", "azure:northeurope"]
REL_TOL = 0.02

problems = []


def problem(msg):
    problems.append(msg)
    print("PROBLEM: " + msg)


def is_num(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def walk_sources(obj, path, has_source):
    """Every number must live in a dict that has a source, or below one."""
    if isinstance(obj, dict):
        src = obj.get("source")
        here = has_source or (isinstance(src, str) and src.strip() != "")
        if "source" in obj and not (isinstance(src, str) and src.strip()):
            problem("%s: empty or non-string source" % path)
        if "uncertain" in obj and not isinstance(obj["uncertain"], bool):
            problem("%s: 'uncertain' must be true/false" % path)
        for k, v in obj.items():
            walk_sources(v, path + "." + k, here)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            walk_sources(v, "%s[%d]" % (path, i), has_source)
    elif is_num(obj) and not has_source:
        problem("%s: number %r has no source" % (path, obj))


def sourced(dev, key, required=True):
    """Return the value of a {value, source} field (or None)."""
    f = dev.get(key)
    if f is None:
        if required:
            problem("%s: missing field %s" % (dev.get("id"), key))
        return None
    if not (isinstance(f, dict) and "value" in f and isinstance(f.get("source"), str) and f["source"].strip()):
        problem("%s.%s: must be an object {value, source}" % (dev.get("id"), key))
        return None
    return f["value"]


def check_mig(dev, mem_gb, sm):
    mig = dev.get("mig")
    did = dev["id"]
    if mig is None:
        return 0
    if not (isinstance(mig.get("source"), str) and "MIG" in mig["source"]):
        problem("%s.mig: source must name the NVIDIA MIG User Guide" % did)
    tc, tm = mig.get("compute_slices_total"), mig.get("memory_slices_total")
    if tc not in (4, 7) or tm not in (4, 8):
        problem("%s.mig: unexpected slice totals %r/%r" % (did, tc, tm))
        return 0
    names = set()
    for p in mig.get("profiles", []):
        n = p.get("name", "?")
        if n in names:
            problem("%s.mig: duplicate profile %s" % (did, n))
        names.add(n)
        m = re.match(r"^(\d+)g\.(\d+)gb(\+me)?$", n)
        c, ms, mi, mg = p.get("compute_slices"), p.get("memory_slices"), p.get("max_instances"), p.get("memory_gb")
        if not m:
            problem("%s.mig: bad profile name %s" % (did, n))
            continue
        if not all(is_num(x) for x in (c, ms, mi, mg)):
            problem("%s.mig.%s: compute_slices/memory_slices/max_instances/memory_gb must be numbers" % (did, n))
            continue
        if int(m.group(1)) != c:
            problem("%s.mig.%s: name says %sg but compute_slices=%s" % (did, n, m.group(1), c))
        if int(m.group(2)) != mg:
            problem("%s.mig.%s: name says %sgb but memory_gb=%s" % (did, n, m.group(2), mg))
        if not (1 <= c <= tc and 1 <= ms <= tm):
            problem("%s.mig.%s: slices %s/%s outside totals %s/%s" % (did, n, c, ms, tc, tm))
        if mi < 1 or mi * c > tc or mi * ms > tm:
            problem("%s.mig.%s: %d instances x (%d compute, %d memory) slices exceed %d/%d" % (did, n, mi, c, ms, tc, tm))
        if m.group(3):
            if mi != 1:
                problem("%s.mig.%s: +me profiles are limited to one instance, got %d" % (did, n, mi))
        elif mi != min(tc // c, tm // ms):
            problem("%s.mig.%s: max_instances %d != min(%d//%d, %d//%d)" % (did, n, mi, tc, c, tm, ms))
        if mem_gb is not None and mg > mem_gb * ms / tm + 1.0:
            problem("%s.mig.%s: %s GB exceeds %s of %s GB" % (did, n, mg, "%d/%d" % (ms, tm), mem_gb))
        ob = p.get("observed")
        if ob:
            if sm is not None and is_num(ob.get("sm_count")) and ob["sm_count"] > sm:
                problem("%s.mig.%s: observed %s SMs > device %s" % (did, n, ob["sm_count"], sm))
            if mem_gb is not None and is_num(ob.get("memory_gib")) and ob["memory_gib"] > mem_gb * ms / tm + 1.0:
                problem("%s.mig.%s: observed %s GiB exceeds its memory share" % (did, n, ob["memory_gib"]))
    full = [p for p in mig.get("profiles", []) if p.get("compute_slices") == tc]
    if not full:
        problem("%s.mig: no full-GPU profile (%dg)" % (did, tc))
    return len(names)


def check_devices(path):
    with open(path) as f:
        cat = json.load(f)
    if cat.get("schema_version") != 1:
        problem("devices: schema_version must be 1")
    devs = cat.get("devices", [])
    ids = [d.get("id") for d in devs]
    seen = set()
    for i in ids:
        if not isinstance(i, str) or i != i.lower() or not re.match(r"^[a-z0-9][a-z0-9-]*$", i):
            problem("devices: non-canonical id %r" % i)
        if i in seen:
            problem("devices: duplicate id %r" % i)
        seen.add(i)
    gpus = [d for d in devs if d.get("kind") == "gpu"]
    cpus = [d for d in devs if d.get("kind") == "cpu"]
    other = [d.get("id") for d in devs if d.get("kind") not in ("gpu", "cpu")]
    if other:
        problem("devices: kind must be gpu or cpu: %s" % other)
    gids = [d["id"] for d in gpus]
    for c in CANONICAL_GPUS:
        if c not in gids:
            problem("devices: canonical GPU %s missing" % c)
    for c in EXTRA_GPUS:
        if c not in gids:
            problem("devices: extra GPU %s missing" % c)
    for g in gids:
        if g not in CANONICAL_GPUS and g not in EXTRA_GPUS:
            problem("devices: GPU id %s is neither in the canonical list nor in EXTRA_GPUS" % g)
    for d in devs:
        if "default_view" in d and not isinstance(d["default_view"], bool):
            problem("%s: default_view must be true/false" % d.get("id"))
    for d in gpus:
        shown = d.get("default_view", True)
        if d["id"] in CANONICAL_GPUS and shown is not True:
            problem("%s: canonical GPU must stay in the default view" % d["id"])
        if d["id"] in EXTRA_GPUS and shown is not False:
            problem("%s: extra GPU must carry \"default_view\": false" % d["id"])
    for d in cpus:
        if not d["id"].startswith("cpu-"):
            problem("devices: CPU id %s must start with 'cpu-'" % d["id"])
    walk_sources(devs, "devices", False)

    n_mig = 0
    for d in gpus:
        did = d["id"]
        for k in ("name", "vendor", "arch", "form_factor"):
            if not isinstance(d.get(k), str) or not d[k]:
                problem("%s: missing %s" % (did, k))
        sm = sourced(d, "sm_count")
        sourced(d, "compute_capability")
        mem = sourced(d, "memory_gb")
        for k in ("memory_bandwidth_gbs", "l2_mb", "tdp_w", "idle_w"):
            val = sourced(d, k)
            if val is not None and (not is_num(val) or val <= 0):
                problem("%s.%s: value must be a positive number" % (did, k))
        idle, tdp = sourced(d, "idle_w", False), sourced(d, "tdp_w", False)
        if is_num(idle) and is_num(tdp) and idle >= tdp:
            problem("%s: idle_w %s >= tdp_w %s" % (did, idle, tdp))
        pk = d.get("peak_tflops")
        if not isinstance(pk, dict) or "fp32" not in pk:
            problem("%s: peak_tflops must be an object with at least fp32" % did)
            pk = {}
        for k, f in pk.items():
            if k not in TENSOR_PRECISIONS:
                problem("%s.peak_tflops: unknown precision %s" % (did, k))
            if not (isinstance(f, dict) and is_num(f.get("value")) and f["value"] > 0 and f.get("source")):
                problem("%s.peak_tflops.%s: must be {value>0, source}" % (did, k))
        prec = d.get("precisions")
        if not isinstance(prec, list) or not prec:
            problem("%s: precisions must be a non-empty list" % did)
            prec = []
        for k in pk:
            if k not in prec:
                problem("%s: peak_tflops has %s but precisions does not" % (did, k))
        for p in prec:
            if p in TENSOR_PRECISIONS and p not in pk:
                problem("%s: precision %s listed without a peak_tflops.%s" % (did, p, p))
        if "mig" not in d:
            problem("%s: mig must be present (null when unsupported)" % did)
        n_mig += 1 if check_mig(d, mem, sm) else 0
    for d in cpus:
        did = d["id"]
        for k in ("cores", "threads", "fp32_flops_per_cycle_per_core", "peak_fp32_gflops", "clock_base_ghz"):
            val = sourced(d, k)
            if val is not None and (not is_num(val) or val <= 0):
                problem("%s.%s: value must be a positive number" % (did, k))
        if not isinstance(d.get("vector_isa"), list) or not d["vector_isa"]:
            problem("%s: vector_isa must be a non-empty list" % did)
        cores, fpc, base, peak = (sourced(d, k, False) for k in ("cores", "fp32_flops_per_cycle_per_core", "clock_base_ghz", "peak_fp32_gflops"))
        if all(is_num(x) for x in (cores, fpc, base, peak)) and not d.get("heterogeneous") and "E-cores" not in json.dumps(d["fp32_flops_per_cycle_per_core"]):
            expect = cores * fpc * base
            if abs(peak - expect) > 0.01 * expect:
                problem("%s: peak_fp32_gflops %s != cores x flops/cycle x base clock = %.1f" % (did, peak, expect))
    n_extra = sum(1 for d in gpus if d.get("default_view") is False)
    print("devices: %d GPUs (%d in the default view, %d more; %d with MIG tables), %d CPUs"
          % (len(gpus), len(gpus) - n_extra, n_extra, n_mig, len(cpus)))
    return gpus


def check_carbon(path):
    with open(path) as f:
        c = json.load(f)
    if c.get("schema_version") != 1:
        problem("carbon: schema_version must be 1")
    regs = c.get("regions", [])
    codes = [r.get("code") for r in regs]
    if len(set(codes)) != len(codes):
        problem("carbon: duplicate region codes")
    if c.get("default") not in codes:
        problem("carbon: default %r is not a region code" % c.get("default"))
    for r in regs:
        code = r.get("code")
        g = r.get("g_per_kwh")
        if not is_num(g) or not (0 < g < 1500):
            problem("carbon.%s: g_per_kwh %r implausible" % (code, g))
        if not isinstance(r.get("source"), str) or not r["source"].strip():
            problem("carbon.%s: missing source" % code)
        if not isinstance(r.get("year"), int) or not (2000 <= r["year"] <= 2035):
            problem("carbon.%s: missing or bad year" % code)
    for need in REQUIRED_COUNTRIES + REQUIRED_CLOUD:
        if need not in codes:
            problem("carbon: required region %s missing" % need)
    pue = c.get("pue", {}).get("default")
    if not (isinstance(pue, dict) and is_num(pue.get("value")) and 1.0 <= pue["value"] <= 3.0 and pue.get("source")):
        problem("carbon: pue.default must be {value in [1,3], source}")
    walk_sources(regs, "carbon.regions", False)
    print("carbon: %d regions, default %s, pue.default %s" % (len(regs), c.get("default"), pue and pue.get("value")))


def parse_csv_number(s):
    """Leading number(s) of a device_specs.csv cell: '125 (FP16 only)' -> [125]; '300-350' -> [300, 350];
    'up to 700' -> [700]; '16 or 32' -> [16, 32]; 'none' / 'not published' / 'n/a' -> None."""
    s = (s or "").strip().lower()
    if not s or s.startswith(("none", "not ", "n/a")):
        return None
    s = s.replace("up to", "").strip()
    head = re.split(r"\s*\(", s)[0]
    nums = [float(x) for x in re.findall(r"\d+(?:\.\d+)?", head)]
    return nums or None


def cross_check(gpus, specs_path, require):
    if not os.path.exists(specs_path):
        msg = ("cross-check SKIPPED: %s not found. The reference table lives in the read-only shared data folder "
               "next to the project root (../shared/data/public/ relative to the repository). Run this script from "
               "a checkout that has ../shared beside it, or pass --specs PATH to a copy of device_specs.csv." % specs_path)
        if require:
            problem(msg)
        else:
            print("WARNING: " + msg)
        return
    with open(specs_path, newline="") as f:
        rows = {r["device"]: r for r in csv.DictReader(f)}
    agree = diff = skipped = 0
    for d in gpus:
        row = rows.get(CSV_ROW.get(d["id"], ""))
        if row is None:
            print("  %-16s not in device_specs.csv (catalog-only entry)" % d["id"])
            continue
        for fpath, col in CSV_FIELDS:
            f = d
            for k in fpath:
                f = f.get(k) if isinstance(f, dict) else None
            ref = parse_csv_number(row.get(col))
            name = ".".join(fpath)
            if f is not None and not (isinstance(f, dict) and is_num(f.get("value"))):
                skipped += 1  # malformed field: already reported by the structural checks
                continue
            if f is None or ref is None:
                if (f is None) != (ref is None):
                    print("  %-16s %-20s catalog=%s csv=%r (one side absent; informational)" % (d["id"], name, f and f.get("value"), row.get(col)))
                skipped += 1
                continue
            val = f["value"]
            ok = any(abs(val - r) <= REL_TOL * max(abs(r), 1e-9) for r in ref) or \
                (len(ref) == 2 and min(ref) <= val <= max(ref))
            if ok:
                agree += 1
                continue
            diff += 1
            explained = f.get("uncertain") or f.get("note")
            print("  %-16s %-20s catalog=%s csv=%r %s" % (d["id"], name, val, row.get(col),
                                                          "(explained: %s)" % (f.get("note") or "marked uncertain") if explained else "UNEXPLAINED"))
            if not explained:
                problem("%s.%s disagrees with device_specs.csv without an 'uncertain' flag or note" % (d["id"], name))
    print("cross-check vs %s: %d fields agree, %d differ, %d not comparable" % (specs_path, agree, diff, skipped))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--devices", default=paths.DEVICES_JSON)
    ap.add_argument("--carbon", default=os.path.join(paths.WEIGHTS, "carbon_regions.json"))
    ap.add_argument("--specs", default=paths.shared("device_specs.csv"))
    ap.add_argument("--require-specs", action="store_true", help="fail when device_specs.csv is absent")
    a = ap.parse_args()
    gpus = []
    for label, fn, p in (("devices", check_devices, a.devices), ("carbon", check_carbon, a.carbon)):
        try:
            r = fn(p)
            if label == "devices":
                gpus = r
        except (OSError, ValueError) as e:
            problem("%s: cannot read %s: %s" % (label, p, e))
    if gpus:
        cross_check(gpus, os.path.normpath(a.specs), a.require_specs)
    if problems:
        print("check_catalog: %d problem(s)" % len(problems))
        return 1
    print("check_catalog: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
