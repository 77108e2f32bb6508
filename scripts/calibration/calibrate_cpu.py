"""Stage E of the roofline calibration: the "cpu" family for the onnxruntime runtime.

Fits, on our own onnxruntime-node measurements of this build machine (data/measured/cpu_ort_node.csv,
drift-free rows only; scripts/measure/ makes them), the CPU family's achievable FP32 GEMM and convolution
efficiencies, its pointwise (vector) efficiency and onnxruntime's per-kernel dispatch cost. Each row is
predicted with its own thread count, so one-thread rows use one core of the catalog entry. The build VM's
catalog entry has no memory bandwidth (not visible in a VM), so the memory roof is not counted for it and
mem_eff cannot be identified here: it keeps its starting value.

Split by model family (the same hash as the GPU whole-model stage): fit on the training families, report
MAPE / median APE / Kendall tau on the held-out ones. The stage refits on whatever rows exist, so later
campaign pieces only need a rerun. Updates weights/roofline.json in place, with provenance.

Run: /usr/bin/python3 -m scripts.calibration.calibrate_cpu   (after scripts/calibration/calibrate_roofline.py)
"""
import json
import math

import numpy as np
from scipy.optimize import minimize
from scipy.stats import kendalltau

from scripts import paths
from scripts.cli import no_options
from scripts.roofline.cpu_rows import machine, ort_queries, ort_rows
from scripts.roofline.perfcard_eval import refresh_manifest, run_queries, write_constants

CONSTANTS = paths.ROOFLINE_JSON
DEVICES = paths.DEVICES_JSON
# onnxruntime's CPU convolutions are im2col + the same MLAS SGEMM its MatMul/Gemm use, so one matrix
# efficiency serves both (fitted apart, the batch-1 fully connected layers of a single family, which are
# weight streaming, would set the GEMM figure alone).
FITTED = ("gemm_eff_fp32", "vector_eff")
TIED = {"conv_eff_fp32": "gemm_eff_fp32"}
MAX_FIT_ROWS = 300


def metrics(pred, meas):
    pred, meas = np.asarray(pred, float), np.asarray(meas, float)
    ape = np.abs(pred / meas - 1)
    tau = kendalltau(pred, meas).correlation if len(pred) > 2 else float("nan")
    return {"rows": int(len(pred)), "mape": round(float(np.mean(ape)), 4),
            "median_ape": round(float(np.median(ape)), 4), "kendall_tau": round(float(tau), 4)}


def fit_sample(train, max_rows=MAX_FIT_ROWS):
    """Every objective evaluation predicts every fitted row again (one `perfcard eval` run), so a large
    campaign is fitted on an equal-share sample per family (seeded); all rows are still scored."""
    if len(train) <= max_rows:
        return train
    fams = train.family.nunique()
    per = max(1, max_rows // fams)
    return (train.groupby("family", group_keys=False)
            .apply(lambda g: g.sample(min(len(g), per), random_state=0))
            .reset_index(drop=True))


def fitted_constants(doc, theta):
    """theta: log(matrix efficiency x clock ratio), logit(vector efficiency), log(dispatch us)[, log bandwidth].
    Only the product reaches the predictor for matrix kernels (time = flops / (peak x eff x clock ratio)), so
    it is fitted unconstrained and split afterwards: the clock ratio is the smallest >= 1 that keeps the
    matrix efficiency <= 1. Pointwise kernels run on the same boosted core, their efficiency in (0, 1).
    The clock ratio belongs to the measured machine (fitted_catalog), never to the family: every other
    CPU shares the family's efficiencies and would otherwise be predicted above its own peak."""
    d = json.loads(json.dumps(doc))
    product = math.exp(theta[0])
    clock = clock_of(theta)
    d["families"]["cpu"]["gemm_eff_fp32"] = product / clock
    d["families"]["cpu"]["vector_eff"] = 1 / (1 + math.exp(-theta[1]))
    for k, src in TIED.items():
        d["families"]["cpu"][k] = d["families"]["cpu"][src]
    d["families"]["cpu"]["clock_ratio"] = 1.0
    d["runtimes"]["onnxruntime"]["dispatch_us"] = math.exp(theta[len(FITTED)])
    return d


def clock_of(theta):
    return max(1.0, math.exp(theta[0]))


def fitted_catalog(catalog, device_id, clock, gbs=None):
    """The catalog with the measured machine's fitted clock ratio (and bandwidth, when fitted)."""
    c = json.loads(json.dumps(catalog))
    for e in c["devices"]:
        if e["id"] == device_id:
            e["clock_ratio"] = {"value": clock, "source": "fitted by scripts/calibration/calibrate_cpu.py (stage E)"}
            if gbs is not None:
                e["memory_bandwidth_gbs"] = {"value": gbs, "source": "fitted by scripts/calibration/calibrate_cpu.py (stage E)"}
    return c


def main():
    with open(CONSTANTS) as f:
        doc = json.load(f)
    with open(DEVICES) as f:
        catalog = json.load(f)
    m = machine()
    entry = next(e for e in catalog["devices"] if e["id"] == m["catalog_id"])
    # A VM does not show its memory system: when the catalog has no bandwidth for it, the stage fits an
    # effective one (the value which, times the family's mem_eff, best explains the rows) and writes it to
    # the catalog marked as fitted, so that GEMV-like and streaming kernels are not charged to compute.
    bw_entry = entry.get("memory_bandwidth_gbs")
    fit_bw = bw_entry is None or "fitted by scripts/calibration/calibrate_cpu.py" in str(bw_entry.get("source", ""))
    rows, counts = ort_rows()
    train, test = rows[rows.split == "train"].reset_index(drop=True), rows[rows.split == "test"].reset_index(drop=True)
    if len(train) < 5:
        raise SystemExit(f"only {len(train)} drift-free training rows: measure more first (scripts/measure/campaign.py)")
    fit = fit_sample(train)
    qs_train = ort_queries(fit)
    n_fit = len(FITTED) + 1 + (1 if fit_bw else 0)

    def run(qs, theta):
        cat = fitted_catalog(catalog, m["catalog_id"], clock_of(theta), math.exp(theta[-1]) if fit_bw else None)
        return run_queries(qs, fitted_constants(doc, theta), devices=cat)

    def objective(theta):
        res = run(qs_train, theta)
        e = np.log(np.array([r["latency_ms"] for r in res]) / fit.latency_ms.values)
        return float(np.mean(e ** 2))

    # Bounds keep the simplex physical: matrix product 0.001..2 (a clock ratio above 2 would be no boost),
    # vector efficiency 0.001..0.999, dispatch 0.01 us..10 ms, bandwidth 1..1000 GB/s.
    bounds = [(math.log(1e-3), math.log(2.0)), (-7.0, 7.0), (math.log(0.01), math.log(1e4))] \
        + ([(0.0, math.log(1000.0))] if fit_bw else [])
    # Few rows, several local optima (memory-bound vs compute-bound explanations of the same layer):
    # the best of a few starts that differ in the bandwidth (or the efficiency when bandwidth is known).
    starts = [[math.log(0.7), 0.0, math.log(5.0)] + ([math.log(b)] if fit_bw else []) for b in (10.0, 30.0, 100.0)] \
        if fit_bw else [[math.log(e), 0.0, math.log(5.0)] for e in (0.3, 0.7, 1.2)]
    opt = None
    for x0 in starts:
        assert len(x0) == n_fit
        o = minimize(objective, np.array(x0), method="Nelder-Mead", bounds=bounds,
                     options={"maxiter": 800, "xatol": 1e-3, "fatol": 1e-7})
        if opt is None or o.fun < opt.fun:
            opt = o
    fitted = fitted_constants(doc, opt.x)
    bw = math.exp(opt.x[-1]) if fit_bw else None

    def score(df):
        if not len(df):
            return None
        res = run(ort_queries(df), opt.x)
        return metrics([r["latency_ms"] for r in res], df.latency_ms)

    prov = json.loads(fitted["provenance"])
    prov["cpu"] = "stage E (scripts/calibration/calibrate_cpu.py): fitted on our onnxruntime-node measurements; see stage_e"
    prov["stage_e"] = {
        "script": "scripts/calibration/calibrate_cpu.py",
        "source": "data/measured/cpu_ort_node.csv (+ machines.json): onnxruntime-node " + m.get("onnxruntime_node", "?")
                  + ", fp32, median of runs; rows with drift=1 (machine loaded) left out",
        "machine": {"machine_id": m["machine_id"], "catalog_id": m["catalog_id"], "cpus": m.get("cpus")},
        "rows": counts,
        "threads_in_rows": sorted(int(t) for t in rows.threads.unique()),
        "batches_in_rows": sorted(int(b) for b in rows.batch.unique()),
        "split": "by model family (sha1 hash, as stage C): fitted on the training families, scored on the others",
        "train_rows": int(len(train)),
        "fit_rows": int(len(fit)),
        "train_families": sorted(train.family.unique().tolist()),
        "held_out_families": sorted(test.family.unique().tolist()),
        "fitted": {k: round(fitted["families"]["cpu"][k], 4) for k in FITTED + tuple(TIED)}
                  | {"build_machine_clock_ratio": round(clock_of(opt.x), 4)}
                  | {"onnxruntime_dispatch_us": round(fitted["runtimes"]["onnxruntime"]["dispatch_us"], 3)}
                  | ({"build_vm_memory_bandwidth_gbs": round(bw, 2)} if fit_bw else {}),
        "tied": {k: "= " + v + " (im2col + MLAS SGEMM)" for k, v in TIED.items()},
        "identification": "compute enters only as efficiency x clock_ratio; clock_ratio is the smallest value >= 1 "
                          "keeping every efficiency <= 1 (one core runs above the catalog's VM-reported clock); it is "
                          "the build machine's own (its catalog entry's clock_ratio), not the cpu family's",
        "not_fitted": "mem_eff, k_half, tile, l2_bw_ratio (starting values); the build VM's bandwidth is fitted "
                      "instead of mem_eff" if fit_bw else "mem_eff, k_half, tile, l2_bw_ratio (starting values)",
        "train_rmse_log": round(math.sqrt(opt.fun), 4),
        "in_sample": score(train),
        "held_out": score(test),
    }
    fitted["provenance"] = json.dumps(prov, sort_keys=True)
    write_constants(fitted, CONSTANTS)
    write_fitted_machine(m["catalog_id"], clock_of(opt.x), bw, prov["stage_e"])
    print(json.dumps(prov["stage_e"], indent=1))
    refresh_manifest()


def write_fitted_machine(device_id, clock, gbs, stage):
    """Edits only this entry's clock_ratio (and memory_bandwidth_gbs when fitted) in weights/devices.json."""
    with open(DEVICES) as f:
        catalog = json.load(f)
    rows = (f"the {stage['train_rows']} drift-free onnxruntime-node rows of the training families "
            f"({', '.join(stage['train_families'])}) (data/measured/cpu_ort_node.csv)")
    for e in catalog["devices"]:
        if e["id"] != device_id:
            continue
        e["clock_ratio"] = {
            "value": clock, "uncertain": True,
            "source": "fitted by scripts/calibration/calibrate_cpu.py (stage E), not measured directly: the smallest "
                      "factor over this entry's peak (derived from the clock the VM reports) that keeps the cpu "
                      f"family's matrix efficiency <= 1 on {rows}; this machine's, not the family's"}
        if gbs is not None:
            e["memory_bandwidth_gbs"] = {
                "value": round(gbs, 2), "uncertain": True,
                "source": "fitted by scripts/calibration/calibrate_cpu.py (stage E), not measured directly: the whole-VM "
                          "effective bandwidth (DRAM and the 32 MiB L3 together: batch-1 activations mostly stay in "
                          "cache, so it can exceed what DRAM alone delivers) "
                          f"which, times the cpu family's mem_eff and the predictor's linear thread share, "
                          f"best explains {rows}; a VM does not show its memory system"}
    with open(DEVICES, "w") as f:
        json.dump(catalog, f, indent=1, ensure_ascii=True)
        f.write("\n")


if __name__ == "__main__":
    no_options(__doc__)
    main()
