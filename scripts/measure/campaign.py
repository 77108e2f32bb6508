#!/usr/bin/python3
"""PerfCard's own CPU measurements: onnxruntime-node on this machine, for the zoo.

Resumable: appends to data/measured/cpu_ort_node.csv and skips configurations already measured on this
machine, so it can run in pieces over days (--max-minutes bounds one piece). Order: every model at
batch 1 on one thread first, then the remaining batches and thread counts.

Drift: a reference configuration (resnet18, batch 1, 1 thread) is timed at the start of a piece and
again every --check-every configurations; when its median moves more than --drift from the piece's
first measurement, the rows measured since the last good check are marked drift=1. Rows also carry the
1-minute load average seen when they were taken. Analyses use drift=0 rows only.

    /usr/bin/python3 scripts/measure/campaign.py [--max-minutes 30] [--models resnet18,vit_b_16]
"""
import argparse
import csv
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from materialize import materialize  # noqa: E402

ZOO = os.path.join(ROOT, "scripts", "zoo", "out")
OUT_DIR = os.path.join(ROOT, "data", "measured")
CSV = os.path.join(OUT_DIR, "cpu_ort_node.csv")
FIELDS = ["timestamp", "machine_id", "model", "family", "batch", "sequence", "threads", "runs", "median_ms",
          "p10_ms", "p90_ms", "min_ms", "spread", "peak_rss_mib", "ort_version", "load_1m", "reference_ratio", "drift"]
REFERENCE = ("resnet18", 1, 0, 1)


def machine():
    lscpu = subprocess.run(["lscpu", "-J"], capture_output=True, text=True).stdout
    fields = {f["field"].rstrip(":"): f["data"] for f in json.loads(lscpu)["lscpu"]} if lscpu else {}
    mem = next((line.split()[1] for line in open("/proc/meminfo") if line.startswith("MemTotal")), "0")
    node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    with open(os.path.join(HERE, "package.json")) as f:
        ort = json.load(f)["dependencies"]["onnxruntime-node"]
    desc = {"cpu_model": fields.get("Model name"), "vendor": fields.get("Vendor ID"), "family": fields.get("CPU family"),
            "model": fields.get("Model"), "cpus": fields.get("CPU(s)"), "threads_per_core": fields.get("Thread(s) per core"),
            "l3": fields.get("L3 cache"), "flags_avx512f": "avx512f" in fields.get("Flags", ""),
            "hypervisor": fields.get("Hypervisor vendor"), "mem_total_kib": int(mem), "kernel": platform.release(),
            "node": node, "onnxruntime_node": ort, "catalog_id": "cpu-build-vm-amd-epyc-zen4"}
    desc["machine_id"] = f"{desc['vendor']}-{desc['family']}-{desc['model']}-{desc['cpus']}cpu-{desc['mem_total_kib'] // 1048576}g"
    return desc


def configs(manifest, only):
    models = [m for m in sorted(manifest) if (not only or m in only) and os.path.exists(os.path.join(ZOO, f"{m}.onnx"))]
    out = []
    for phase in (0, 1):
        for m in models:
            info = manifest[m]
            seqs = [128, 512] if "sequence" in json.dumps(info.get("input_shape", "")) else [0]
            for b in (1, 4, 16):
                for t in (1, 2):
                    for s in seqs:
                        first = b == 1 and t == 1 and s == seqs[0]
                        if (phase == 0) == first:
                            out.append((m, b, s, t))
    return out


def measure(model_path, batch, seq, threads):
    cmd = ["node", os.path.join(HERE, "ort_run.mjs"), model_path, "--threads", str(threads), "--dim", f"batch={batch}"]
    if seq:
        cmd += ["--dim", f"sequence={seq}"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, cwd=HERE)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"exit {r.returncode}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def done_configs(csv_path, machine_id, key):
    """Configurations already measured without drift on this machine (resume skips them)."""
    done = set()
    if os.path.exists(csv_path):
        with open(csv_path) as f:
            for row in csv.DictReader(f):
                if row["machine_id"] == machine_id and row["drift"] == "0":
                    done.add(key(row))
    return done


def print_coverage(planned, csv_path, machine_id):
    """Drift-free rows against the plan, by (batch, threads) and by family at batch 1 / 1 thread: the
    campaign's aim is the whole zoo at batch 1 and the main families at every batch."""
    done = done_configs(csv_path, machine_id,
                        lambda row: (row["model"], int(row["batch"]), int(row["sequence"]), int(row["threads"])))
    marked = 0
    if os.path.exists(csv_path):
        with open(csv_path) as f:
            marked = sum(1 for row in csv.DictReader(f) if row["machine_id"] == machine_id and row["drift"] != "0")
    print(f"{machine_id}: {len(done & set(planned))} of {len(planned)} configurations measured drift-free "
          f"({marked} rows marked drift=1, to be re-measured)")
    print("batch threads  done / planned")
    for b in (1, 4, 16):
        for t in (1, 2):
            plan = [c for c in planned if c[1] == b and c[3] == t]
            print(f"{b:5d} {t:7d}  {sum(c in done for c in plan):4d} / {len(plan)}")


def run_piece(todo, measure_one, make_row, reference, csv_path, fields, deadline, check_every, drift_limit):
    """Measures `todo` in order until the deadline, appending rows to csv_path. The reference is timed at
    the start (median of three) and after every `check_every` rows; the rows since the last check are written with the
    ratio and marked drift=1 when it moved more than drift_limit. A configuration the runtime cannot run
    is reported and skipped, never retried forever."""
    new_file = not os.path.exists(csv_path)
    # The base is the median of three timings: one cold or unlucky first timing would otherwise mark a
    # whole piece as drifted (seen on this VM: a base 5-7% slow, every later check "drifted").
    base = statistics.median(reference() for _ in range(3))
    pending = []
    with open(csv_path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        if new_file:
            w.writeheader()

        def flush(ratio):
            drift = abs(ratio - 1) > drift_limit
            for row in pending:
                row["reference_ratio"] = round(ratio, 4)
                row["drift"] = int(drift)
                w.writerow(row)
            f.flush()
            pending.clear()
            if drift:
                print("drift: the rows above are marked drift=1", flush=True)

        for config in todo:
            if time.time() > deadline:
                break
            try:
                r = measure_one(config)
            except Exception as e:
                print(f"skip {config}: {e}", flush=True)
                continue
            row = make_row(config, r)
            row.update({"timestamp": datetime.datetime.now().isoformat(timespec="seconds"), "runs": r["runs"],
                        "median_ms": round(r["median_ms"], 4), "p10_ms": round(r["p10_ms"], 4),
                        "p90_ms": round(r["p90_ms"], 4), "min_ms": round(r["min_ms"], 4),
                        "spread": round(r["spread"], 4), "ort_version": r["ort_version"],
                        "load_1m": round(os.getloadavg()[0], 2), "reference_ratio": "", "drift": ""})
            pending.append(row)
            print(f"{' '.join(str(c) for c in config):40s} {r['median_ms']:9.2f} ms spread {r['spread']:.3f}", flush=True)
            if len(pending) >= check_every:
                flush(reference() / base)
        if pending:
            flush(reference() / base)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--max-minutes", type=float, default=30)
    ap.add_argument("--models", default="")
    ap.add_argument("--check-every", type=int, default=10)
    ap.add_argument("--drift", type=float, default=0.03)
    ap.add_argument("--coverage", action="store_true", help="print what is measured (drift-free) and exit")
    args = ap.parse_args()
    if args.coverage:
        with open(os.path.join(ZOO, "manifest.json")) as f:
            print_coverage(configs(json.load(f)["models"], set()), CSV, machine()["machine_id"])
        return
    if not os.path.isdir(os.path.join(HERE, "node_modules", "onnxruntime-node")):
        subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=HERE, check=True,
                       env=dict(os.environ, ONNXRUNTIME_NODE_INSTALL_CUDA="skip"))
    with open(os.path.join(ZOO, "manifest.json")) as f:
        manifest = json.load(f)["models"]
    os.makedirs(OUT_DIR, exist_ok=True)
    desc = machine()
    with open(os.path.join(OUT_DIR, "machine.json"), "w") as f:
        json.dump(desc, f, indent=1, sort_keys=True)
        f.write("\n")
    done = done_configs(CSV, desc["machine_id"],
                        lambda row: (row["model"], int(row["batch"]), int(row["sequence"]), int(row["threads"])))
    todo = [c for c in configs(manifest, set(filter(None, args.models.split(",")))) if c not in done]
    print(f"{len(done)} configurations done on {desc['machine_id']}, {len(todo)} to go", flush=True)
    tmp = tempfile.mkdtemp(prefix="perfcard-measure-")
    materialized = {}

    def path_of(m):
        if m not in materialized:
            materialized[m] = materialize(os.path.join(ZOO, f"{m}.onnx"), os.path.join(tmp, m))
        return materialized[m]

    def make_row(config, r):
        m, b, s, t = config
        return {"machine_id": desc["machine_id"], "model": m, "family": manifest[m].get("family", ""), "batch": b,
                "sequence": s, "threads": t, "peak_rss_mib": round(r["peak_rss_mib"], 1)}

    try:
        run_piece(todo, lambda c: measure(path_of(c[0]), *c[1:]), make_row,
                  lambda: measure(path_of(REFERENCE[0]), *REFERENCE[1:])["median_ms"], CSV, FIELDS,
                  time.time() + args.max_minutes * 60, args.check_every, args.drift)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
