"""ML.ENERGY LLM-serving rows matched to the zoo's decode graphs and the device catalog, and PerfCard's
own decode-step predictions for them (latency, busy fraction, intensity from `perfcard eval`).

What a row is: one vLLM serving configuration (model, GPU, max batch) measured by ML.ENERGY; we compare
its average GPU power and energy per output token with PerfCard's prediction for one decode step of the
zoo's `<id>.decode` graph at the row's average batch, with the KV cache at half the average output
length (prompt lengths are not in the data). Only single-GPU rows (tensor parallel 1) match: a TP shard
plus its all-reduces is a different graph. vLLM replays decode steps as CUDA graphs, so the runtime
queried is "kernel" (no host dispatch gaps), not PyTorch eager.

Sources (read in place from ../shared/data/public/):
  mlenergy_v3_llm.csv          avg_power_watts measured (all GPUs of the row), energy_per_token_joules;
                               H100/B200; no README alongside it, so no commit id is known for it
  mlenergy_v2_llm_diffusion.csv ml-energy/leaderboard-v2 c3af7f31 (mlenergy_v2.README): Energy/req and
                               Avg Output Tokens give J/token; power = J/token x Token tput (derived)
  mlenergy_v1_legacy_llm.csv   HF transformers (not vLLM), energy per response on A100/A40/V100 without
                               batch size or power: not matched (batch is unknown)
"""
from __future__ import annotations

import csv
import json
import os

from scripts import paths

PUBLIC = paths.SHARED_DATA
if not os.path.isdir(PUBLIC):
    PUBLIC = "/work/shared/data/public"

V2_COMMIT = "c3af7f31e231a2a7021c5f8e2a54dd712d02e6e2"
DEVICE = {"H100": "h100-sxm5-80gb", "B200": "b200-sxm-180gb", "NVIDIA H100 80GB HBM3": "h100-sxm5-80gb",
          "NVIDIA A100-SXM4-40GB": "a100-sxm4-40gb"}
PRECISION = {"bfloat16": "bf16"}
RUNTIME = "kernel"


def zoo_index():
    """ML.ENERGY model id -> (zoo decode graph path, zoo family, catalogue id)."""
    from scripts.zoo import manifest
    out = {}
    for e in manifest.read_all():
        if e.get("generator") != "transformers" or not e["id"].endswith(".decode"):
            continue
        for mid in e.get("names", {}).get("mlenergy", []):
            out[mid] = (os.path.join(manifest.OUT_DIR, e["file"]), e["family"], e["variant"])
    return out


def load_rows():
    """(matched rows, {reason: count} of the rows left out)."""
    idx = zoo_index()
    rows, skipped = [], {}

    def skip(reason):
        skipped[reason] = skipped.get(reason, 0) + 1

    with open(os.path.join(PUBLIC, "mlenergy_v3_llm.csv")) as f:
        for r in csv.DictReader(f):
            if r["model_id"] not in idx:
                skip(f"v3: no zoo graph for the architecture ({r['architecture']})")
            elif int(r["num_gpus"]) != 1:
                skip("v3: multi-GPU (tensor/expert parallel)")
            elif r["gpu_model"] not in DEVICE or r["weight_precision"] not in PRECISION:
                skip("v3: GPU or precision not in the catalog")
            else:
                path, fam, cid = idx[r["model_id"]]
                rows.append(dict(source="ML.ENERGY v3", model_id=r["model_id"], graph=path, family=fam, variant=cid,
                                 device_id=DEVICE[r["gpu_model"]], precision=PRECISION[r["weight_precision"]],
                                 batch=float(r["avg_batch_size"]), output_len=float(r["avg_output_len"]),
                                 power_w=float(r["avg_power_watts"]),
                                 energy_per_token_j=float(r["energy_per_token_joules"]),
                                 itl_ms=float(r["median_itl_ms"]), task=r["task"], power_measured=True))
    with open(os.path.join(PUBLIC, "mlenergy_v2_llm_diffusion.csv")) as f:
        for r in csv.DictReader(f):
            if not r["_task"].startswith("llm_"):
                if r["_task"].startswith("mllm_"):
                    skip("v2: multimodal (vision tower not in the graph)")
                continue
            if r["Model"] not in idx:
                skip("v2: no zoo graph for the architecture")
            elif int(r["TP"] or 1) != 1:
                skip("v2: multi-GPU (tensor parallel)")
            elif r["GPU"] not in DEVICE:
                skip("v2: GPU not in the catalog")
            else:
                path, fam, cid = idx[r["Model"]]
                ept = float(r["Energy/req (J)"]) / float(r["Avg Output Tokens"])
                rows.append(dict(source="ML.ENERGY v2", model_id=r["Model"], graph=path, family=fam, variant=cid,
                                 device_id=DEVICE[r["GPU"]], precision="bf16", batch=float(r["Avg BS (reqs)"]),
                                 output_len=float(r["Avg Output Tokens"]),
                                 power_w=ept * float(r["Token tput (tok/s)"]), energy_per_token_j=ept,
                                 itl_ms=float(r["Avg TPOT (s)"]) * 1e3, task=r["_task"], power_measured=False))
    with open(os.path.join(PUBLIC, "mlenergy_v1_legacy_llm.csv")) as f:
        for _ in csv.DictReader(f):
            skip("v1 legacy: HF runtime, no batch size or power")
    missing = [r for r in rows if not os.path.exists(r["graph"])]
    if missing:
        raise SystemExit(f"{missing[0]['graph']} is missing: run /usr/bin/python3 -m scripts.zoo.transformers")
    return rows, skipped


def decode_queries(rows):
    return [{"model": r["graph"], "device": r["device_id"], "precision": r["precision"], "runtime": RUNTIME,
             "dims": {"batch": max(1, round(r["batch"])), "sequence": 1,
                      "past_sequence": max(1, round(r["output_len"] / 2))}} for r in rows]


def predict_rows(rows, constants):
    """Adds latency_pred_ms, busy_fraction, intensity (PerfCard's) to each row."""
    from scripts.roofline.perfcard_eval import run_queries
    res = run_queries(decode_queries(rows), constants)
    for r, x in zip(rows, res):
        r.update(latency_pred_ms=x["latency_ms"], busy_fraction=x["busy_fraction"], intensity=x["intensity"],
                 pred_batch=max(1, round(r["batch"])))
    return rows


def device_power(ids):
    with open(paths.DEVICES_JSON) as f:
        devs = {d["id"]: d for d in json.load(f)["devices"]}
    return {i: (devs[i]["idle_w"]["value"], devs[i]["tdp_w"]["value"]) for i in ids}


def power_model(rows, gamma, floor, power_table):
    """The C++ formula (core/src/predict.cpp), mirrored to optimize its two constants; the check in
    scripts/calibration/calibrate_power.py compares it with `perfcard predict --json` on real rows."""
    out = []
    for r in rows:
        idle, tdp = power_table[r["device_id"]]
        out.append(idle + (tdp - idle) * r["busy_fraction"] * max(floor, r["intensity"]) ** gamma)
    return out


def fit_gamma(rows, floor, power_table):
    """Least squares in log power over rows with measured power. Only gamma is fitted: `floor` clamps the
    intensity from below, and every matched decode row's intensity is above any plausible floor, so the
    data cannot identify it (fit_power reports the lowest intensity seen)."""
    import numpy as np
    from scipy.optimize import minimize_scalar
    fit = [r for r in rows if r["power_measured"]]
    meas = np.log([r["power_w"] for r in fit])

    def loss(g):
        return float(np.mean((np.log(power_model(fit, g, floor, power_table)) - meas) ** 2))

    res = minimize_scalar(loss, bounds=(0.05, 8.0), method="bounded")
    return float(res.x), len(fit), loss(res.x)


def heldout_predictions(rows, floor, power_table):
    """Per row: power and energy per token predicted with gamma fitted on the other families only
    (leave-one-family-out; a family with no measured-power rows uses the fit on all of them)."""
    fams = sorted({r["family"] for r in rows})
    gammas = {}
    for fam in fams:
        train = [r for r in rows if r["family"] != fam]
        gammas[fam] = fit_gamma(train, floor, power_table)[0]
    out = []
    for r in rows:
        p = power_model([r], gammas[r["family"]], floor, power_table)[0]
        out.append(dict(r, power_pred_w=p, energy_per_token_pred_j=p * r["latency_pred_ms"] / 1e3 / r["pred_batch"],
                        gamma_used=gammas[r["family"]], fitted_on=[f for f in fams if f != r["family"]]))
    return out, gammas
