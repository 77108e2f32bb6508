"""PerfCard's own browser-runtime measurements: onnxruntime-web's wasm backend (one thread) on this machine,
in node and in Debian's headless Chromium, for the zoo. The companion of campaign.py (onnxruntime-node):
same models, batches and sequences, same resumable CSV and drift marking, one thread only (more would need
SharedArrayBuffer, i.e. a cross-origin-isolated page).

Each piece first runs PerfCard's machine probe three times per environment (probe_web.py, into
data/measured/machine_probe.json): the browser roofline family is fitted relative to it.

Resumable: appends to data/measured/web_ort_wasm.csv (--csv elsewhere for trials) and skips
configurations already measured without drift on this machine. Order: campaign.py's plan at one thread
(by default its classic, transformer and NB201 graphs, up to --max-gflop), each configuration in node and
then in Chromium.

Drift: campaign.py's reference configuration (resnet18, batch 1, 1 thread, onnxruntime-node) is timed
at the start of a piece and after every --check-every rows; rows measured since the last good check are
marked drift=1 when it moved more than --drift. What drifts is the machine, and the native runtime sees
it with less noise of its own than onnxruntime-web does (the first two pieces used the web runtime).

    /usr/bin/python3 -m scripts.measure.campaign_web [--max-minutes 30] [--models resnet18] [--env node,chromium]
        [--csv /tmp/trial.csv]
"""
import argparse
import json
import os
import subprocess
import time

import onnx

from scripts import paths
from scripts.measure import campaign, machines, probe_web  # campaign: constants, configuration order, materialize, the piece loop
from scripts.measure.campaign import run_piece

CSV = os.path.join(campaign.OUT_DIR, "web_ort_wasm.csv")
FIELDS = campaign.FIELDS[:3] + ["env"] + campaign.FIELDS[3:]
ENVS = ("node", "chromium")


def machine_web():
    desc = machines.describe()
    with open(os.path.join(paths.MEASURE, "package.json")) as f:
        desc["onnxruntime_web"] = json.load(f)["dependencies"]["onnxruntime-web"]
    chromium = os.environ.get("PERFCARD_CHROMIUM", "/usr/bin/chromium")
    r = subprocess.run([chromium, "--version"], capture_output=True, text=True) if os.path.exists(chromium) else None
    desc["chromium"] = r.stdout.strip() if r and r.returncode == 0 else None
    return desc


def configs(models, only, envs, max_gflop):
    """campaign.py's order at one thread, each configuration once per environment."""
    out = []
    for m, b, s, p, t in campaign.configs(models, only, max_gflop):
        if t == 1:
            out.extend((m, b, s, p, e) for e in envs)
    return out


def config_key(row):
    """campaign.py's key with the environment in place of the thread count (always 1 here)."""
    return campaign.config_key(row)[:4] + (row["env"],)


def external_files(model_path):
    m = onnx.load(model_path, load_external_data=False)
    locs = {e.value for t in m.graph.initializer if t.data_location == onnx.TensorProto.EXTERNAL
            for e in t.external_data if e.key == "location"}
    return [os.path.join(os.path.dirname(model_path), loc) for loc in sorted(locs)]


def measure(model_path, batch, seq, past, env):
    cmd = ["node", os.path.join(paths.MEASURE, "ort_web_run.mjs"), model_path, "--env", env] + campaign.dim_args(batch, seq, past)
    for p in external_files(model_path):
        cmd += ["--external-data", p]
    return campaign.run_json(cmd)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--max-minutes", type=float, default=30)
    ap.add_argument("--models", default="", help="comma-separated model names (as in the CSV)")
    # One wasm thread is ~2-3x slower than onnxruntime-node's two: a lower cap, and the torchvision variants
    # are left to campaign.py unless asked for.
    ap.add_argument("--sets", default="classic,transformers,nasbench201")
    ap.add_argument("--max-gflop", type=float, default=160)
    ap.add_argument("--env", default=",".join(ENVS))
    ap.add_argument("--csv", default=CSV)
    ap.add_argument("--check-every", type=int, default=10)
    ap.add_argument("--drift", type=float, default=0.03)
    # onnxruntime-web's runs spread more than node's on a quiet machine (median 0.32 in Chromium, 0.41 in
    # node: wasm tier-up and garbage collection inside the timed loop); 0.5 retimes its unsteadiest quarter.
    campaign.add_steadiness_options(ap, max_spread=0.5)
    args = ap.parse_args()
    envs = [e for e in args.env.split(",") if e]
    if any(e not in ENVS for e in envs):
        ap.error(f"--env takes {', '.join(ENVS)}")
    if not os.path.isdir(os.path.join(paths.MEASURE, "node_modules", "onnxruntime-web")):
        subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=paths.MEASURE, check=True,
                       env=dict(os.environ, ONNXRUNTIME_NODE_INSTALL_CUDA="skip"))
    # Chromium is driven by the browser tests' harness (tests/web/harness.mjs), whose playwright-core is the
    # repository's own dependency: a clone that never ran `npm test` lacks it.
    if "chromium" in envs and not os.path.isdir(os.path.join(paths.ROOT, "node_modules", "playwright-core")):
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=paths.ROOT, check=True)
    models = campaign.zoo_models([s for s in args.sets.split(",") if s])
    out_dir = os.path.dirname(os.path.abspath(args.csv))
    os.makedirs(out_dir, exist_ok=True)
    desc = machines.record(machine_web(), os.path.join(out_dir, "machines.json"))
    done = campaign.done_configs(args.csv, desc["machine_id"], config_key)
    todo = [c for c in configs(models, set(filter(None, args.models.split(","))), envs, args.max_gflop)
            if c not in done]
    print(f"{len(done)} configurations done on {desc['machine_id']}, {len(todo)} to go", flush=True)
    # The browser family is fitted relative to the machine's probe (calibrate_browser.py): every piece
    # probes the machine it measures, in each environment it measures.
    if args.csv == CSV and todo:
        probe_web.probe_and_record(desc["machine_id"], envs, 3)
    with campaign.Materialized() as path_of:
        def make_row(config, r):
            m, b, s, p, env = config
            rss = r.get("peak_rss_mib")  # null in Chromium: the renderer's memory is not visible from the driver
            return {"machine_id": desc["machine_id"], "model": m, "env": env, "family": models[m]["family"],
                    "batch": b, "sequence": s, "past_sequence": p, "threads": 1,
                    "peak_rss_mib": "" if rss is None else round(rss, 1)}

        # The machine is what drifts, so campaign.py's onnxruntime-node reference watches it: the same
        # model under onnxruntime-web moved 3-10% between checks on a quiet machine (wasm tier-up and GC
        # inside one short process), which marked nearly every row of the first two pieces.
        ref = campaign.REFERENCE
        run_piece(todo, lambda c: measure(path_of(c[0]), *c[1:]), make_row,
                  lambda: campaign.measure(path_of(ref[0]), *ref[1:])["median_ms"],
                  args.csv, FIELDS, time.time() + args.max_minutes * 60, args.check_every, args.drift,
                  args.max_spread, args.retries)


if __name__ == "__main__":
    main()
