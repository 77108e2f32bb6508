"""Stage G of the roofline calibration: PyTorch eager's host-side constants, from our own GPU rows.

    /usr/bin/python3 -m scripts.calibration.calibrate_eager_gpu [--write]

Reads data/measured/gpu_<device>_torch.csv (scripts/measure/gpu_campaign.py) through
scripts/calibration/evaluate_gpu_ours.py's loader and fits, on the campaign's training families only (the
hash split of stage C, scripts/roofline/whole_models.family_split), three constants of the `pytorch-eager`
runtime that belong to the host, the driver and the PyTorch build rather than to the GPU:
- context_mb: the CUDA context and the libraries' resident memory, the median of NVML's used memory beyond
  PyTorch's reserved pool over every row;
- workspace_mb: what PyTorch allocates beyond the weights and activations the memory model counts in a
  no_grad forward (cuBLAS/cuBLASLt workspaces, cuDNN's), the median over the inference rows;
- dispatch_us: the host's cost per kernel, fitted in log space on the inference rows (where these small
  models leave the GPU mostly idle it is the latency);
- launch_us, where rows were profiled (kernels and GPU busy time): a kernel's least time on the GPU, a
  constant of the device family, fitted to the profiled busy time first (it does not depend on the host),
  then dispatch_us with it. One value for every profiled family (hopper alone so far).
--write stores context_mb and workspace_mb (for `pytorch-eager` and `pytorch-cuda-graphs`, whose memory
figures are eager's) in weights/roofline.json with the provenance; they enter no feature.
--write-features also stores launch_us on every GPU family: a kernel's least time on the GPU, measured where
rows were profiled and taken for the others (the same driver's launch path), because a floor on one family
alone makes its GPUs look slower than the others wherever the host does not hide it (the `kernel` and CUDA
graphs runtimes: an H100 at 0.52 ms against an A100 at 0.21 ms for ResNet-50 at batch 1). The learned
predictors read the roofline's busy time and latency as features, so this goes with a retrain
(scripts/retrain.sh right after). Tried 2026-11-27 and not shipped: no never-fitted latency moved, and
ML.ENERGY's LLM serving power and energy got worse (docs/accuracy.md, "Our GPU measurements"); check
`scripts.calibration.evaluate_roofline` before and after whenever the profiled rows change. dispatch_us is
reported, never written here: no single host cost fits every source's hosts (docs/accuracy.md, "Host-bound
rows"), and stage C's is the compromise between them.
Run after stage C (calibrate_models.py); scripts/calibrate.sh runs every stage in order.
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys

from scripts import paths
from scripts.roofline.perfcard_eval import run_queries, write_constants

MIB = 2 ** 20
# Runtimes whose memory figures are eager's (weights/roofline.json's pytorch-cuda-graphs source says so).
MEMORY_RUNTIMES = ("pytorch-eager", "pytorch-cuda-graphs")


def beyond_reserved_mib(row):
    """NVML's used memory beyond PyTorch's reserved pool: the CUDA context and the libraries (or None)."""
    if not (row["device_used_mib"] and row["max_reserved_mib"]):
        return None
    return row["device_used_mib"] - row["max_reserved_mib"]


def beyond_tensors_mib(row, answer):
    """PyTorch's peak allocated beyond the weights and activations the memory model counts (`answer`: the
    row's `perfcard eval` memory answer): the libraries' workspaces, in a no_grad forward (or None)."""
    if not row["max_allocated_mib"]:
        return None
    m = answer["memory_bytes"]
    return row["max_allocated_mib"] - (m["weights"] + m["activations"]) / MIB


def split_of(rows):
    from scripts.roofline.whole_models import family_split
    return {r["family"]: family_split(r["family"]) for r in rows}


def with_constants(base, launch_families=(), **eager):
    """`base` with eager's runtime constants set, and `launch_us` (a kernel's least time on the GPU, a
    constant of the device family) set on `launch_families`."""
    d = json.loads(json.dumps(base))
    for k, v in eager.items():
        if k == "launch_us":
            for fam in launch_families:
                d["families"][fam]["launch_us"] = v
            continue
        rts = MEMORY_RUNTIMES if k in ("context_mb", "workspace_mb") else ("pytorch-eager",)
        for rt in rts:
            d["runtimes"][rt][k] = v
    return d


def busy_ms(answer):
    """The device busy time of a `perfcard eval` answer."""
    return answer["busy_fraction"] * answer["latency_ms"]


def fit_launch(inf, base):
    """launch_us of the families of the profiled rows (`gpu_busy_ms`: the union of one step's GPU operations)
    fitted to their busy time, or None without such rows: (launch_us, families, rmse of log busy time, rows)."""
    from scipy.optimize import minimize_scalar
    from scripts.calibration.evaluate_gpu_ours import query
    prof = [r for r in inf if r.get("gpu_busy_ms")]
    if not prof:
        return None
    qs = [query(r, "roofline") for r in prof]
    families = sorted({x["family"] for x in run_queries(qs, base)})
    measured = [float(r["gpu_busy_ms"]) for r in prof]

    def loss(log_l):
        res = run_queries(qs, with_constants(base, families, launch_us=math.exp(log_l)))
        return statistics.fmean(math.log(busy_ms(x) / m) ** 2 for x, m in zip(res, measured))

    opt = minimize_scalar(loss, bounds=(math.log(0.01), math.log(50.0)), method="bounded", options={"xatol": 1e-3})
    return round(math.exp(opt.x), 3), families, round(math.sqrt(opt.fun), 4), len(prof)


def fit(rows, base):
    """{context_mb, workspace_mb, dispatch_us, and launch_us where rows were profiled} fitted on the training
    families, and the report (launch_families: the device families launch_us is of)."""
    from scipy.optimize import minimize_scalar
    from scripts.calibration.evaluate_gpu_ours import query
    split = split_of(rows)
    train = [r for r in rows if split[r["family"]] == "train"]
    inf = [r for r in train if r["protocol"] == "inference"]
    context_mb = statistics.median(v for v in map(beyond_reserved_mib, train) if v is not None) * MIB / 1e6
    parts = run_queries([query(r, "roofline", memory=True) for r in inf], base)
    workspace_mb = statistics.median(v for v in map(beyond_tensors_mib, inf, parts) if v is not None) * MIB / 1e6
    qs = [query(r, "roofline") for r in inf]
    # Busy time does not depend on the host's dispatch: the kernel floor is fitted first, dispatch with it.
    launch = fit_launch(inf, base)
    floor = {"launch_us": launch[0]} if launch else {}
    families = launch[1] if launch else []

    def loss(log_d):
        res = run_queries(qs, with_constants(base, families, dispatch_us=math.exp(log_d), **floor))
        return statistics.fmean(math.log(x["latency_ms"] / r["median_ms"]) ** 2 for x, r in zip(res, inf))

    opt = minimize_scalar(loss, bounds=(0.0, math.log(200.0)), method="bounded", options={"xatol": 1e-3})
    fitted = {"context_mb": round(context_mb, 1), "workspace_mb": round(workspace_mb, 2),
              "dispatch_us": round(math.exp(opt.x), 3)}
    report = {"fit_rows": len(inf), "memory_rows": len(train), "train_families": sorted({r["family"] for r in train}),
              "held_out_families": sorted({r["family"] for r in rows if split[r["family"]] == "test"}),
              "train_rmse_log_dispatch": round(math.sqrt(opt.fun), 4), "split": split, "launch_families": []}
    if launch:
        fitted["launch_us"], report["launch_families"], report["train_rmse_log_busy"], report["busy_rows"] = launch
    return fitted, report


def gpu_families():
    """The device families of the catalog's GPUs (as the core assigns them)."""
    from scripts.roofline.perfcard_eval import catalog_devices
    return sorted({d["family"] for d in catalog_devices() if d["kind"] == "gpu" and d.get("family")})


def shipped_constants(doc, fitted, report):
    """The constants `doc` has for each fitted key (launch_us: of the first launch family)."""
    return {k: (doc["families"][report["launch_families"][0]][k] if k == "launch_us" else doc["runtimes"]["pytorch-eager"][k])
            for k in fitted}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="store context_mb and workspace_mb in weights/roofline.json")
    ap.add_argument("--write-features", action="store_true",
                    help="with --write: also launch_us on every GPU family (retrain the learned predictors after)")
    a = ap.parse_args(argv)
    from scripts.calibration.evaluate_gpu_ours import load
    rows, _, envs = load()
    if not rows:
        print("no GPU campaign rows in data/measured: nothing to fit")
        return 0
    with open(paths.ROOFLINE_JSON) as f:
        doc = json.load(f)
    fitted, report = fit(rows, doc)
    shipped = shipped_constants(doc, fitted, report)
    print(json.dumps({"fitted": fitted, "shipped": shipped, **{k: v for k, v in report.items() if k != "split"}}, indent=1))
    if a.write_features and not a.write:
        ap.error("--write-features goes with --write")
    if not a.write:
        return 0
    doc = with_constants(doc, context_mb=fitted["context_mb"], workspace_mb=fitted["workspace_mb"])
    launch_to = gpu_families() if a.write_features and "launch_us" in fitted else []
    if launch_to:
        doc = with_constants(doc, launch_to, launch_us=fitted["launch_us"])
    stage_g = "stage G: context_mb and workspace_mb fitted on our own GPU rows (scripts/calibration/calibrate_eager_gpu.py)"
    for rt in MEMORY_RUNTIMES:  # its own part replaced, another stage's (stage H's) kept
        parts = [p for p in doc["runtimes"][rt]["source"].split(" | ") if not p.startswith("stage G:")]
        doc["runtimes"][rt]["source"] = " | ".join(parts[:1] + [stage_g] + parts[1:])
    prov = json.loads(doc["provenance"])
    prov["stage_g"] = {
        "script": "scripts/calibration/calibrate_eager_gpu.py",
        "source": "data/measured/gpu_*_torch.csv: " + "; ".join(
            f"{dev} ({e['gpu']}, PyTorch {e['torch']}, CUDA {e['cuda']}, driver {e['driver']})" for dev, e in sorted(envs.items())),
        "written": {k: fitted[k] for k in ("context_mb", "workspace_mb")},
        "runtimes": list(MEMORY_RUNTIMES),
        **({"launch_us_written": {"families": launch_to, "value": fitted["launch_us"],
                                  "measured_on": report["launch_families"]}} if launch_to else
           {"launch_us_fitted_not_written": {f: fitted["launch_us"] for f in report["launch_families"]}}
           if "launch_us" in fitted else {}),
        "dispatch_us_fitted_not_written": fitted["dispatch_us"],
        "why_not_dispatch": "the learned predictors read the roofline's latency as a feature and were trained with "
                            "the present dispatch constant: both change together, in a retrain",
        "why_launch": "launch_us is written on every GPU family at once or not at all (a floor on one family alone "
                      "makes its GPUs look slower than the rest where the host does not hide it); on every family "
                      "it worsened ML.ENERGY's never-fitted LLM power and energy (2026-11-27), so it stays 0",
        "context": "median of NVML used minus PyTorch max_memory_reserved, every protocol",
        "workspace": "median of PyTorch max_memory_allocated minus the memory model's weights and activations, "
                     "no_grad inference",
        **{k: v for k, v in report.items() if k != "split"},
    }
    doc["provenance"] = json.dumps(prov, sort_keys=True)
    write_constants(doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
