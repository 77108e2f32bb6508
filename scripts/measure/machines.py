"""The machines our measurements were taken on, by machine_id (every measured row names one), in
data/measured/machines.json; and which device catalog entry each one is.

The build VM is not one machine across sessions (an AMD EPYC guest until 2026-11-24, an Intel Xeon guest
on 2026-11-25): a campaign adds its machine's description beside the others instead of replacing one file,
and rows map to a catalog entry by their own machine_id. A machine without a catalog entry (None) has
rows that are data, kept and counted, but not predicted: its CPU needs an entry with sourced figures first.
"""
from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess

from scripts import paths

PATH = os.path.join(paths.MEASURED, "machines.json")
# machine_id -> weights/devices.json id, for the machines the catalog describes.
CATALOG_IDS = {"AuthenticAMD-25-17-2cpu-23g": "cpu-build-vm-amd-epyc-zen4"}


def describe() -> dict:
    """This machine: lscpu fields, memory, kernel, node; its machine_id and catalog id (or None)."""
    lscpu = subprocess.run(["lscpu", "-J"], capture_output=True, text=True).stdout
    fields = {f["field"].rstrip(":"): f["data"] for f in json.loads(lscpu)["lscpu"]} if lscpu else {}
    mem = next((line.split()[1] for line in open("/proc/meminfo") if line.startswith("MemTotal")), "0")
    node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    desc = {"cpu_model": fields.get("Model name"), "vendor": fields.get("Vendor ID"), "family": fields.get("CPU family"),
            "model": fields.get("Model"), "cpus": fields.get("CPU(s)"), "threads_per_core": fields.get("Thread(s) per core"),
            "l3": fields.get("L3 cache"), "flags_avx512f": "avx512f" in fields.get("Flags", ""),
            "hypervisor": fields.get("Hypervisor vendor"), "mem_total_kib": int(mem), "kernel": platform.release(),
            "node": node, "bogomips": fields.get("BogoMIPS"), "l2": fields.get("L2 cache"),
            "flags_avx2": "avx2" in fields.get("Flags", "").split(), "flags_fma": "fma" in fields.get("Flags", "").split()}
    desc["getconf_caches"] = getconf_caches()
    desc["machine_id"] = f"{desc['vendor']}-{desc['family']}-{desc['model']}-{desc['cpus']}cpu-{desc['mem_total_kib'] // 1048576}g"
    desc["catalog_id"] = CATALOG_IDS.get(desc["machine_id"])
    return desc


def getconf_caches() -> dict:
    """L1d, L2 and L3 sizes in bytes as CPUID reports them (getconf), for guests whose lscpu shows no cache:
    per core for L1d and L2; L3 is what the hypervisor passes on (seen: a 2-vCPU Zen 5 guest's host socket, 508
    MiB). Levels the machine does not report are left out."""
    try:
        return parse_getconf(subprocess.run(["getconf", "-a"], capture_output=True, text=True).stdout)
    except OSError:  # no getconf on the machine: nothing reported
        return {}


def parse_getconf(text: str) -> dict:
    names = {"LEVEL1_DCACHE_SIZE": "l1d", "LEVEL2_CACHE_SIZE": "l2", "LEVEL3_CACHE_SIZE": "l3"}
    got = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] in names and parts[1].isdigit() and int(parts[1]) > 0:
            got[names[parts[0]]] = int(parts[1])
    return got


def load(path: str = PATH) -> dict[str, dict]:
    """Every described machine, by machine_id."""
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return json.load(f)["machines"]


def record(desc: dict, path: str = PATH) -> dict:
    """Adds (or updates) one machine's description, keeping every other machine's; returns what is stored
    for it (fields a campaign adds, such as the runtime versions, accumulate)."""
    known = load(path)
    merged = {**known.get(desc["machine_id"], {}), **desc}
    known[desc["machine_id"]] = merged
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump({"machines": known}, f, indent=1, sort_keys=True)
        f.write("\n")
    return merged


def catalog_id(machine_id: str) -> str | None:
    return CATALOG_IDS.get(machine_id)


def probe_cpu(cli: str = paths.CLI) -> dict:
    """`perfcard probe --cpu --json` on this machine: the rates' medians, the runs and the entry."""
    return json.loads(subprocess.run([cli, "probe", "--cpu", "--json"], check=True, capture_output=True, text=True).stdout)


def probe_native(cli: str = paths.CLI) -> dict:
    """This machine's one-thread rates as `perfcard probe --cpu` measures them natively (a matrix product in
    cache, a read over a buffer larger than L3): each rate's median over its probes, with the probes. The
    procedure is the CLI's, so that the rates recorded here, which the cpu-probed family is fitted on
    (scripts/calibration/calibrate_cpu_probe.py), and those `perfcard predict --device this-machine` measures are
    the same statistic. A campaign records it beside the machine's description (record()), on a quiet machine,
    so that a machine without a catalog entry still has measured rates to be predicted with."""
    doc = probe_cpu(cli)
    return {"gemm_gflops": round(doc["gemm_gflops"], 3), "stream_gbs": round(doc["stream_gbs"], 3),
            "runs": [{k: round(r[k], 3) for k in ("gemm_gflops", "stream_gbs")} for r in doc["runs"]],
            "timestamp": datetime.datetime.now().isoformat(timespec="seconds")}


PROBED_PREFIX = "probed-"


def probed_entries(described: dict | None = None) -> dict[str, dict]:
    """{machine_id: its "cpu-probed" device entry} for every described machine with a native probe: the entry
    `perfcard predict --device this-machine` makes of the machine it runs on, from the probe's median recorded
    here (probe_native) and the machine's cores and RAM. The core writes each (`perfcard probe --cpu --rates`),
    so the fit of the cpu-probed family (scripts/calibration/calibrate_cpu_probe.py) and the CLI share one writer."""
    from scripts.roofline import perfcard_eval
    described = load() if described is None else described
    out = {}
    for mid, d in sorted(described.items()):
        probe = d.get("native_probe")
        if not probe:
            continue
        if not d.get("cpus") or not d.get("mem_total_kib"):
            raise SystemExit(f"{mid}: machines.json has a native probe but lacks its cpus or mem_total_kib")
        cores = max(1, int(d["cpus"]) // max(1, int(d.get("threads_per_core") or 1)))
        cmd = [perfcard_eval.cli(), "probe", "--cpu", "--rates", f"{probe['gemm_gflops']!r},{probe['stream_gbs']!r}",
               "--cores", str(cores), "--memory-gb", repr(int(d["mem_total_kib"]) * 1024 / 1e9),
               "--id", PROBED_PREFIX + mid, "--name", f"{mid} (native probe)",
               "--where", f"on {mid}, the median of {len(probe.get('runs', [])) or 'its'} probes (data/measured/machines.json)"]
        got = subprocess.run(cmd, capture_output=True, text=True)
        if got.returncode != 0:
            raise SystemExit(f"{mid}: perfcard probe --cpu refused its recorded probe: {got.stderr.strip()}")
        out[mid] = json.loads(got.stdout)["device"]
    return out
