"""How much of HELP's measured NAS-Bench-201 latency ordering PerfCard's static features already carry.

    nice -n 19 /usr/bin/python3 -m scripts.roofline.evaluate_help [--sample 1000] [--seed 0]

Needs the zoo's NB201 graphs and manifest (scripts/zoo/nasbench201.py). For every device_batch key of
`../shared/data/public/help_latency_long.csv.gz` (search_space nasbench201) it prints Kendall's tau-b
between the measured latency and, over all 15,625 cells, PerfCard's analyze totals at batch 1 (MACs,
params, nodes, activations; MACs scale with batch, so their order is the same at every batch).

A roofline latency column needs a catalog device: HELP's Xeons and the Raspberry Pi 4 are in
weights/devices.json and are predicted as themselves (ONNX Runtime on CPU, batch 1 — HELP does not
state the CPU batch); its GPUs (1080 Ti, 2080 Ti, Titan RTX/X/Xp) are not, so the RTX 3090 (the
catalog's nearest consumer GPU) stands in at the key's batch, which only says whether a roofline
ordering transfers. Phones, Eyeriss and the FPGA have no stand-in. Predictions are made for a seeded
sample of cells (--sample) because each is one CLI call; tau columns say over how many cells.
"""
from __future__ import annotations

import argparse
import csv
import gzip
import json
import os
import random
import subprocess
import sys

from scipy.stats import kendalltau

from scripts import paths
from scripts.zoo import manifest

HELP_CSV = paths.shared("help_latency_long.csv.gz")
CATALOG = {  # HELP device key -> catalog id predicted as that device
    "gold_6226": "cpu-intel-xeon-gold-6226", "gold_6240": "cpu-intel-xeon-gold-6240",
    "silver_4114": "cpu-intel-xeon-silver-4114", "silver_4210r": "cpu-intel-xeon-silver-4210r",
    "raspi4": "cpu-broadcom-bcm2711-raspberry-pi-4",
}
GPU_STAND_IN = "rtx3090"
FEATURES = ("macs", "params", "nodes", "activations")


def help_latency() -> dict[str, dict[int, float]]:
    out: dict[str, dict[int, float]] = {}
    with gzip.open(HELP_CSV, "rt", newline="") as f:
        for row in csv.DictReader(f):
            if row["search_space"] == "nasbench201":
                out.setdefault(row["device_batch"], {})[int(row["arch_index"])] = float(row["latency_ms"])
    return out


GPUS = ("1080ti", "2080ti", "titan_rtx", "titanx", "titanxp")  # the keys with a batch suffix


def split_key(key: str) -> tuple[str, int | None]:
    """'titan_rtx_256' -> ('titan_rtx', 256); 'gold_6226' and 'essential_ph_1' are device names."""
    dev, _, b = key.rpartition("_")
    return (dev, int(b)) if dev in GPUS and b.isdigit() else (key, None)


def predict(path: str, devices: list[str], batches: list[int]) -> dict[tuple[str, int], float]:
    cmd = [manifest.perfcard_binary(), "predict", path, "--device", ",".join(devices),
           "--batch", ",".join(map(str, batches)), "--json"]
    r = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return {(p["device"], p["batch"]): p["latency_ms"] for p in json.loads(r.stdout)["predictions"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sample", type=int, default=1000, help="cells predicted with the roofline (0: none)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    entries = {}
    with open(os.path.join(manifest.MANIFEST_DIR, "nasbench201.jsonl")) as f:
        for line in f:
            e = json.loads(line)
            if "macs" in e:
                entries[e["config"]["arch_index"]] = e
    lat = help_latency()
    keys = sorted(lat)
    gpu_batches = sorted({b for k in keys for d, b in [split_key(k)] if b is not None})

    sample = sorted(random.Random(args.seed).sample(sorted(entries), min(args.sample, len(entries))))
    preds: dict[int, dict] = {}
    for idx in sample:
        path = os.path.join(manifest.OUT_DIR, entries[idx]["file"])
        preds[idx] = predict(path, list(CATALOG.values()), [1])
        preds[idx].update(predict(path, [GPU_STAND_IN], gpu_batches))

    print(f"Kendall tau-b, HELP NAS-Bench-201 latency vs PerfCard ({len(entries)} cells analyzed, "
          f"roofline on {len(sample)} sampled cells)")
    head = f"{'device_batch':16s} {'n':>6s} " + " ".join(f"{k:>11s}" for k in FEATURES) + f" {'roofline':>9s}  as"
    print(head)
    for key in keys:
        common = [i for i in sorted(lat[key]) if i in entries]
        y = [lat[key][i] for i in common]
        taus = [kendalltau([entries[i][k] for i in common], y)[0] for k in FEATURES]
        dev, batch = split_key(key)
        proxy, col = None, ""
        if dev in CATALOG:
            proxy = (CATALOG[dev], 1)
        elif dev in GPUS:
            proxy = (GPU_STAND_IN, batch)
        if proxy and sample:
            pts = [(preds[i][proxy], lat[key][i]) for i in sample if i in lat[key]]
            col = f"{kendalltau(*zip(*pts))[0]:9.3f}  {proxy[0]} b{proxy[1]}"
        else:
            col = f"{'-':>9s}"
        print(f"{key:16s} {len(common):6d} " + " ".join(f"{t:11.3f}" for t in taus) + " " + col)
    return 0


if __name__ == "__main__":
    sys.exit(main())
