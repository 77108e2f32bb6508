"""PerfCard's own CPU measurements: onnxruntime-node on this machine, for the zoo.

Resumable: appends to data/measured/cpu_ort_node.csv and skips configurations already measured on this
machine, so it can run in pieces over days (--max-minutes bounds one piece). What it measures and in
which order: configs() below (the classic exports and the transformers at batch 1 first, the NB201
sample and the torchvision variants at batch 1: the whole zoo at batch 1; then the classic and transformer
graphs at their other batches / sequences / threads).

Drift: a reference configuration (resnet18, batch 1, 1 thread) is timed at the start of a piece and
again every --check-every configurations; when its median is more than --drift from the piece's level (the
median of the start's timing and every earlier check's), the rows measured since the last check are marked
drift=1. A lasting change becomes the level once it has held for more checks than came before it. Rows also
carry the 1-minute load average seen when they were taken, their check's reference time (reference_ms) and
their piece (its start time), so drift can be judged again later. Analyses use drift=0 rows only.

Steadiness: the reference catches a machine that stays slower, not a tenant that loads it for a few seconds.
A configuration whose own runs spread more than --max-spread ((p90 - p10) / median) is timed again, up to
--retries times, and the steadiest timing is kept: on the build VM the held-out error of every predictor
grows with the spread of the row's runs (docs/accuracy.md, the spread table), i.e. an unsteady median is
the other tenants' as much as the model's.

    /usr/bin/python3 -m scripts.measure.campaign [--max-minutes 30] [--models resnet18,transformers/gpt2.prefill]
        [--sets classic,transformers] [--coverage]
"""
import argparse
import csv
import datetime
import json
import os
import random
import shutil
import statistics
import subprocess
import tempfile
import time

from scripts import paths
from scripts.measure import machines
from scripts.measure.materialize import materialize
from scripts.zoo import manifest as zoo_manifest

ZOO = paths.ZOO_OUT
OUT_DIR = paths.MEASURED
CSV = os.path.join(OUT_DIR, "cpu_ort_node.csv")
FIELDS = ["timestamp", "machine_id", "model", "family", "batch", "sequence", "past_sequence", "threads", "runs", "median_ms",
          "p10_ms", "p90_ms", "min_ms", "spread", "peak_rss_mib", "ort_version", "load_1m", "reference_ratio", "drift",
          "reference_ms", "piece"]
# Columns older rows never had: left empty when a file gains them (0 would be a figure never taken).
NEVER_TAKEN = ("reference_ms", "piece")
REFERENCE = ("resnet18", 1, 0, 0, 1)


def machine():
    """This machine as machines.py describes it, with the onnxruntime-node version the campaign runs."""
    desc = machines.describe()
    with open(os.path.join(paths.MEASURE, "package.json")) as f:
        desc["onnxruntime_node"] = json.load(f)["dependencies"]["onnxruntime-node"]
    return desc


# Which graphs the campaign measures, from the zoo's sets (scripts/zoo/README.md). A model is named by its
# path under scripts/zoo/out without ".onnx": "resnet18" (the classic export), "transformers/gpt2.prefill",
# "torchvision/resnet50_w48_r224", "nasbench201/nb201_00042".
SETS = ("classic", "transformers", "nasbench201", "torchvision")
# fp32 weights live in RAM and, materialized, on disk: 1.6e9 parameters is 6.4 GB of each.
TRANSFORMER_MAX_PARAMS = 1.6e9
# The NB201 cells measured: the head of the seeded sample scripts/roofline/cpu_rows.py draws for HELP's
# CPU rows, so the same cells have HELP's PyTorch figures and ours.
NB201_SAMPLE, NB201_SEED, NB201_DRAW = 200, 0, 2000
IMAGE_BATCHES, THREADS, SEQUENCES, PASTS = (1, 4, 16), (1, 2), (128, 512), (128, 512)


def classic_gflop(name, info):
    """FLOPs per sample of a classic export: torch's count where the export recorded one, else the core's
    (the two largest exports, vit_h_14 and regnet_y_128gf, have none; unknown must not read as free)."""
    if info.get("torch_macs"):
        return 2 * info["torch_macs"] / 1e9
    path = os.path.join(ZOO, f"{name}.onnx")
    try:
        return zoo_manifest.analyze(path, {"batch": 1})["flops"] / 1e9 if os.path.exists(path) else float("inf")
    except (FileNotFoundError, RuntimeError):
        return float("inf")


def zoo_models(sets=SETS):
    """model -> {set, family, kind (image | sequence | decode), gflop (one sample at the shapes the entry was
    counted at), base_sequence} for every graph of `sets` whose file exists under scripts/zoo/out."""
    out = {}
    if "classic" in sets and os.path.exists(os.path.join(ZOO, "manifest.json")):
        with open(os.path.join(ZOO, "manifest.json")) as f:
            for m, info in json.load(f)["models"].items():
                seq = "sequence" in json.dumps(info.get("input_shape", ""))
                out[m] = {"set": "classic", "family": info.get("family", ""), "kind": "sequence" if seq else "image",
                          "gflop": classic_gflop(m, info), "base_sequence": 128}
    for s in ("transformers", "nasbench201", "torchvision"):
        if s not in sets:
            continue
        with open(os.path.join(paths.ZOO_MANIFESTS, f"{s}.jsonl")) as f:
            entries = [json.loads(line) for line in f]
        if s == "transformers":
            entries = [e for e in entries if e["params"] <= TRANSFORMER_MAX_PARAMS]
        if s == "nasbench201":
            by_index = {e["config"]["arch_index"]: e for e in entries}
            draw = random.Random(NB201_SEED).sample(sorted(by_index), min(NB201_DRAW, len(by_index)))
            entries = [by_index[i] for i in draw[:NB201_SAMPLE]]
        for e in entries:
            name = e["file"][:-len(".onnx")]
            bind = e.get("bind", {})
            kind = "decode" if "past_sequence" in bind else "sequence" if "sequence" in bind else "image"
            out[name] = {"set": s, "family": e["family"], "kind": kind, "gflop": e["flops"] / 1e9,
                         "base_sequence": bind.get("sequence", 128)}
    return {m: v for m, v in out.items() if os.path.exists(os.path.join(ZOO, f"{m}.onnx"))}


def shapes(kind):
    """(batch, sequence, past_sequence) of a model kind, first the one every model gets first."""
    if kind == "sequence":
        return [(b, s, 0) for b in IMAGE_BATCHES for s in SEQUENCES]
    if kind == "decode":
        return [(b, 1, p) for b in IMAGE_BATCHES for p in PASTS]
    return [(b, 0, 0) for b in IMAGE_BATCHES]


def est_gflop(info, batch, seq):
    scale = seq / info["base_sequence"] if info["kind"] == "sequence" else 1.0
    return info["gflop"] * batch * scale


def family_turns(names, models):
    """Names reordered so that families take turns, the cheapest graph of each first: a piece cut short
    still spans every family."""
    by_family = {}
    for m in sorted(names, key=lambda m: (models[m]["gflop"], m)):
        by_family.setdefault(models[m]["family"], []).append(m)
    longest = max(map(len, by_family.values()), default=0)
    return [ms[i] for i in range(longest) for ms in by_family.values() if i < len(ms)]


def configs(models, only=(), max_gflop=float("inf")):
    """The campaign's order of (model, batch, sequence, past_sequence, threads): every classic and
    transformer graph once at batch 1 / 1 thread, the NB201 sample at batch 1, the torchvision variants at
    batch 1, then the classic and transformer graphs at every other batch, sequence and thread count
    (variants and the rest in family turns). A configuration above max_gflop per inference is left out of
    the plan (print_coverage counts it). `--sets classic,transformers` reaches the batch sweeps sooner."""
    names = [m for m in sorted(models) if not only or m in only]
    main = [m for m in names if models[m]["set"] in ("classic", "transformers")]
    first = [(m, *shapes(models[m]["kind"])[0], 1) for m in main]
    firsts = set(first)
    rest = [(m, b, s, p, t) for m in family_turns(main, models) for (b, s, p) in shapes(models[m]["kind"])
            for t in THREADS if (m, b, s, p, t) not in firsts]
    nb201 = [(m, 1, 0, 0, 1) for m in names if models[m]["set"] == "nasbench201"]
    variants = [(m, 1, 0, 0, 1) for m in family_turns([m for m in names if models[m]["set"] == "torchvision"], models)]
    return [c for c in first + nb201 + variants + rest if est_gflop(models[c[0]], c[1], c[2]) <= max_gflop]


def dim_args(batch, seq, past):
    out = ["--dim", f"batch={batch}"]
    if seq:
        out += ["--dim", f"sequence={seq}"]
    if past:
        out += ["--dim", f"past_sequence={past}"]
    return out


def error_line(stderr):
    """The line that says what failed: node ends an uncaught error's report with its own version banner."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if "Error" in line]
    return errors[-1] if errors else lines[-1] if lines else ""


def run_json(cmd):
    """Runs one measuring process (in this folder) and returns the JSON line it ends with; a failure raises
    with the line that says what failed."""
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, cwd=paths.MEASURE)
    if r.returncode != 0:
        raise RuntimeError(error_line(r.stderr) or f"exit {r.returncode}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def measure(model_path, batch, seq, past, threads):
    return run_json(["node", os.path.join(paths.MEASURE, "ort_run.mjs"), model_path, "--threads", str(threads)]
                    + dim_args(batch, seq, past))


def done_configs(csv_path, machine_id, key):
    """Configurations already measured without drift on this machine (resume skips them)."""
    done = set()
    if os.path.exists(csv_path):
        with open(csv_path) as f:
            for row in csv.DictReader(f):
                if row["machine_id"] == machine_id and row["drift"] == "0":
                    done.add(key(row))
    return done


def config_key(row):
    return (row["model"], int(row["batch"]), int(row["sequence"]), int(row.get("past_sequence") or 0),
            int(row["threads"]))


def print_coverage(models, csv_path, machine_id, max_gflop):
    """Drift-free rows against the plan, per zoo set: at batch 1 / 1 thread (the aim: the whole zoo) and at
    every planned configuration (the aim for the classic and transformer graphs), and how many
    configurations the plan leaves out as too heavy for this machine."""
    done = done_configs(csv_path, machine_id, config_key)
    planned = configs(models, max_gflop=max_gflop)
    every = configs(models)
    marked = 0
    if os.path.exists(csv_path):
        with open(csv_path) as f:
            marked = sum(1 for row in csv.DictReader(f) if row["machine_id"] == machine_id and row["drift"] != "0")
    print(f"{machine_id}: {len(done & set(planned))} of {len(planned)} planned configurations measured drift-free "
          f"({marked} rows marked drift=1, to be re-measured; {len(every) - len(planned)} configurations above "
          f"{max_gflop:g} GFLOP per inference left out)")
    print(f"{'set':13s} {'graphs':>6s}  {'batch 1, 1 thread':>17s}  {'every configuration':>19s}")
    for s in SETS:
        plan = [c for c in planned if models[c[0]]["set"] == s]
        if not plan:
            continue
        first = {}
        for c in plan:
            first.setdefault(c[0], c)
        n_first = sum(c in done for c in first.values())
        print(f"{s:13s} {len(first):6d}  {n_first:8d} / {len(first):<6d}  {sum(c in done for c in plan):9d} / {len(plan)}")


def ensure_header(csv_path, fields, restval="0", blank=NEVER_TAKEN):
    """Rewrites an existing CSV whose header lacks columns added since, `restval` in the old rows (0 for this
    campaign's numbers; empty where 0 would be a wrong figure, as a count never taken), and empty in the columns
    `blank` names whatever restval is."""
    if not os.path.exists(csv_path):
        return
    with open(csv_path, newline="") as f:
        r = csv.DictReader(f)
        if r.fieldnames == fields:
            return
        rows = list(r)
    extra = set(rows[0]) - set(fields) if rows else set()
    if extra:
        raise SystemExit(f"{csv_path}: columns {sorted(extra)} are not in this campaign's fields")
    for row in rows:
        for col in blank:
            if col in fields:
                row.setdefault(col, "")
    tmp = csv_path + ".tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, restval=restval)
        w.writeheader()
        w.writerows(rows)
    os.replace(tmp, csv_path)


class Materialized:
    """Runnable copies (graph + pseudo-random weights) in a temporary folder: the reference model's and
    the current one's only, since a long piece walks through many gigabytes of weights."""

    def __enter__(self):
        self.tmp = tempfile.mkdtemp(prefix="perfcard-measure-")
        self.paths = {}
        return self.path_of

    def path_of(self, m):
        if m not in self.paths:
            for old in [k for k in self.paths if k != REFERENCE[0]]:
                shutil.rmtree(os.path.join(self.tmp, old), ignore_errors=True)
                del self.paths[old]
            self.paths[m] = materialize(os.path.join(ZOO, f"{m}.onnx"), os.path.join(self.tmp, m))
        return self.paths[m]

    def __exit__(self, *exc):
        shutil.rmtree(self.tmp, ignore_errors=True)


def steadiest(measure_one, config, max_spread, retries):
    """The timing of `config` with the smallest spread: timed again while its spread exceeds max_spread,
    at most `retries` more times (None: once)."""
    best = measure_one(config)
    for _ in range(retries if max_spread is not None else 0):
        if best["spread"] <= max_spread:
            break
        print(f"{' '.join(str(c) for c in config):40s} spread {best['spread']:.3f} > {max_spread}: timed again",
              flush=True)
        again = measure_one(config)
        if again["spread"] < best["spread"]:
            best = again
    return best


def run_piece(todo, measure_one, make_row, reference, csv_path, fields, deadline, check_every, drift_limit,
              max_spread=None, retries=0):
    """Measures `todo` in order until the deadline, appending rows to csv_path. The reference is timed at
    the start (median of three) and after every `check_every` rows; the rows since the last check are written with
    the check's ratio to the piece's level and marked drift=1 when it is more than drift_limit from 1. A
    configuration the runtime cannot run is reported and skipped, never retried forever; one whose runs spread
    more than max_spread is timed again up to `retries` times (steadiest())."""
    ensure_header(csv_path, fields)
    new_file = not os.path.exists(csv_path)
    # The level is the median of the start's timing (itself a median of three) and every earlier check's, not
    # the start's alone: a start that caught the machine fast or slow would otherwise mark the whole piece as
    # drifted (seen: a start 5-7% slow on the build VM; 9% fast on a Zen 5 guest, every later check within 3%
    # of each other and "drifted").
    levels = [statistics.median(reference() for _ in range(3))]
    # Each row keeps its check's reference time and its piece (the piece's start), so an analysis can judge
    # drift again afterwards, e.g. against the piece's final level instead of the level when it was written.
    piece = datetime.datetime.now().isoformat(timespec="seconds")
    pending = []
    with open(csv_path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        if new_file:
            w.writeheader()

        def flush(ms):
            ratio = ms / statistics.median(levels)
            levels.append(ms)
            drift = abs(ratio - 1) > drift_limit
            for row in pending:
                row["reference_ratio"] = round(ratio, 4)
                row["drift"] = int(drift)
                row["reference_ms"] = round(ms, 4)
                row["piece"] = piece
                w.writerow(row)
            f.flush()
            pending.clear()
            if drift:
                print("drift: the rows above are marked drift=1", flush=True)

        for config in todo:
            if time.time() > deadline:
                break
            try:
                r = steadiest(measure_one, config, max_spread, retries)
            except Exception as e:
                print(f"skip {config}: {e}", flush=True)
                continue
            row = make_row(config, r)
            row.update({"timestamp": datetime.datetime.now().isoformat(timespec="seconds"), "runs": r["runs"],
                        "median_ms": round(r["median_ms"], 4), "p10_ms": round(r["p10_ms"], 4),
                        "p90_ms": round(r["p90_ms"], 4), "min_ms": round(r["min_ms"], 4),
                        "spread": round(r["spread"], 4), "ort_version": r["ort_version"],
                        "load_1m": round(os.getloadavg()[0], 2), "reference_ratio": "", "drift": "",
                        "reference_ms": "", "piece": ""})
            pending.append(row)
            print(f"{' '.join(str(c) for c in config):40s} {r['median_ms']:9.2f} ms spread {r['spread']:.3f}", flush=True)
            if len(pending) >= check_every:
                flush(reference())
        if pending:
            flush(reference())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--max-minutes", type=float, default=30)
    ap.add_argument("--models", default="", help="comma-separated model names (as in the CSV)")
    ap.add_argument("--sets", default=",".join(SETS), help=f"zoo sets to plan from ({', '.join(SETS)})")
    ap.add_argument("--max-gflop", type=float, default=640,
                    help="leave out configurations above this many GFLOP per inference (~65 s each at one thread)")
    ap.add_argument("--check-every", type=int, default=10)
    ap.add_argument("--drift", type=float, default=0.03)
    add_steadiness_options(ap)
    ap.add_argument("--coverage", action="store_true", help="print what is measured (drift-free) and exit")
    args = ap.parse_args()
    models = zoo_models([s for s in args.sets.split(",") if s])
    if args.coverage:
        print_coverage(models, CSV, machine()["machine_id"], args.max_gflop)
        return
    if not os.path.isdir(os.path.join(paths.MEASURE, "node_modules", "onnxruntime-node")):
        subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=paths.MEASURE, check=True,
                       env=dict(os.environ, ONNXRUNTIME_NODE_INSTALL_CUDA="skip"))
    os.makedirs(OUT_DIR, exist_ok=True)
    desc = machines.record(machine())
    if "native_probe" not in desc:
        # Once per machine, on the quiet machine the piece is about to time: its measured bandwidth is what
        # predicts it while the catalog has no entry for it.
        if os.path.exists(paths.CLI):
            desc = machines.record({**desc, "native_probe": machines.probe_native()})
        else:
            print(f"no native probe recorded: {paths.CLI} is not built (scripts/build.sh)", flush=True)
    done = done_configs(CSV, desc["machine_id"], config_key)
    todo = [c for c in configs(models, set(filter(None, args.models.split(","))), args.max_gflop) if c not in done]
    print(f"{len(done)} configurations done on {desc['machine_id']}, {len(todo)} to go", flush=True)
    with Materialized() as path_of:
        def make_row(config, r):
            m, b, s, p, t = config
            return {"machine_id": desc["machine_id"], "model": m, "family": models[m]["family"], "batch": b,
                    "sequence": s, "past_sequence": p, "threads": t, "peak_rss_mib": round(r["peak_rss_mib"], 1)}

        run_piece(todo, lambda c: measure(path_of(c[0]), *c[1:]), make_row,
                  lambda: measure(path_of(REFERENCE[0]), *REFERENCE[1:])["median_ms"], CSV, FIELDS,
                  time.time() + args.max_minutes * 60, args.check_every, args.drift, args.max_spread, args.retries)


def add_steadiness_options(ap, max_spread=0.2):
    """The default suits onnxruntime-node on the build VM (a fifth of its rows spread more than 0.2)."""
    ap.add_argument("--max-spread", type=float, default=max_spread,
                    help="time a configuration again when (p90 - p10) / median of its runs exceeds this")
    ap.add_argument("--retries", type=int, default=2, help="at most this many more timings of an unsteady configuration")


if __name__ == "__main__":
    main()
