"""PerfCard's machine probe ("this device", core/include/perfcard/machine_probe.h) run as the page runs it:
the wasm build's probeMachine() in node and in headless Chromium, recorded per machine and environment in
data/measured/machine_probe.json. The browser roofline family is fitted relative to these rates
(scripts/calibration/calibrate_browser.py), so each machine with onnxruntime-web rows needs its own probes,
taken on the same machine; campaign_web.py takes them at the start of every piece.

    /usr/bin/python3 -m scripts.measure.probe_web [--runs 5] [--env node,chromium]
"""
import argparse
import json
import os
import statistics
import subprocess
import time

from scripts import paths
from scripts.measure import machines

PATH = os.path.join(paths.MEASURED, "machine_probe.json")
RUNNER = os.path.join(paths.MEASURE, "probe_run.mjs")
ENVS = ("node", "chromium")
FAMILY = "browser"  # the roofline family of a probed machine (stage W, calibrate_browser.py)
DEVICE_PREFIX = "probe-"


def run_probe(env: str) -> dict:
    out = subprocess.run(["node", RUNNER, "--env", env], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def load(path: str = PATH) -> dict:
    if not os.path.exists(path):
        return {"machines": {}}
    with open(path) as f:
        return json.load(f)


def record(machine_id: str, env: str, runs: list[dict], path: str = PATH) -> dict:
    """Appends these runs to the machine's list for this environment; returns the machine's summary."""
    doc = load(path)
    m = doc["machines"].setdefault(machine_id, {})
    e = m.setdefault(env, {"runs": []})
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    for r in runs:
        e["runs"].append({"timestamp": stamp, "gemm_gflops": round(r["gemm_gflops"], 3),
                          "stream_gbs": round(r["stream_gbs"], 3), "runtime": r.get("runtime")})
    with open(path, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    return summary(doc, machine_id)


def summary(doc: dict, machine_id: str) -> dict:
    """{env: {gemm_gflops, stream_gbs, runs}}: the median of every run recorded for the machine."""
    out = {}
    for env, e in doc["machines"].get(machine_id, {}).items():
        runs = e["runs"]
        if runs:
            out[env] = {"gemm_gflops": statistics.median(r["gemm_gflops"] for r in runs),
                        "stream_gbs": statistics.median(r["stream_gbs"] for r in runs), "runs": len(runs)}
    return out


def device_id(machine_id: str, env: str) -> str:
    return f"{DEVICE_PREFIX}{machine_id}-{env}"


def device_entries(doc: dict | None = None) -> dict:
    """{(machine_id, env): the device entry the page makes from a probe}, one per machine and environment with
    probes, from their median. The core writes each entry (`perfcard probe --rates`), as it writes the page's:
    one writer of the fields (the wasm32 memory limit, the sources) for both."""
    from scripts.roofline import perfcard_eval
    doc = load() if doc is None else doc
    out = {}
    for machine_id in doc["machines"]:
        for env, s in summary(doc, machine_id).items():
            cmd = [perfcard_eval.cli(), "probe", "--rates", f"{s['gemm_gflops']!r},{s['stream_gbs']!r}",
                   "--id", device_id(machine_id, env), "--name", f"{machine_id} ({env}, probed)",
                   "--where", f"on {machine_id} in {env}, the median of {s['runs']} probe" + "s" * (s["runs"] != 1)]
            got = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            out[(machine_id, env)] = json.loads(got)["device"]
    return out


def catalog_with_probes(entries: dict | None = None) -> dict:
    """weights/devices.json with the probed machines' entries added (what `perfcard eval --devices` reads)."""
    entries = device_entries() if entries is None else entries
    with open(paths.DEVICES_JSON) as f:
        cat = json.load(f)
    cat["devices"] += list(entries.values())
    return cat


def probe_and_record(machine_id: str, envs, runs: int, path: str = PATH) -> dict:
    """`runs` probes per environment, the environments taking turns (a slow spell of the machine hits both),
    recorded; returns the machine's summary."""
    got = {e: [] for e in envs}
    for _ in range(runs):
        for e in envs:
            got[e].append(run_probe(e))
    s = {}
    for e in envs:
        s = record(machine_id, e, got[e], path)
    return s


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--env", default=",".join(ENVS))
    args = ap.parse_args()
    machine_id = machines.describe()["machine_id"]
    envs = [e for e in args.env.split(",") if e]
    if any(e not in ENVS for e in envs):
        ap.error(f"--env takes {', '.join(ENVS)}")
    s = probe_and_record(machine_id, envs, args.runs)
    print(json.dumps({"machine_id": machine_id, **s}, indent=1))


if __name__ == "__main__":
    main()
