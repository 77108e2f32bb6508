"""Stage W of the roofline calibration: the "browser" family and the onnxruntime-web runtime, for the page's
"this device" row (docs/this-device.md).

A visitor's machine has no catalog entry: the page measures it (PerfCard's probe, perfcard/machine_probe.h:
an f32 matrix product in cache, GFLOP/s, and a one-thread read over a buffer larger than L3, GB/s) and
predicts with a device whose fp32 peak and bandwidth are those rates and whose arch is "browser". This stage
fits what onnxruntime-web's wasm kernels reach of the probe's rates (the family's matrix and pointwise
efficiencies, mem_eff) and the runtime's per-kernel cost, on our onnxruntime-web rows
(data/measured/web_ort_wasm.csv, drift-free, one thread) of machines whose probe was taken
(data/measured/machine_probe.json), each row predicted with the probe of its own machine and environment
(node or Chromium). Split by model family as every stage (fit on the training families, scored on the
held-out ones). With one machine the held-out figure is for new models, not for new machines; with more,
each machine is also left out in turn (fitted on the others' training families, scored on all its rows):
that figure, pooled, is the browser family's accuracy, since a visitor's machine is never one we measured.

Writes weights/roofline.json (the family, the runtime, accuracy["browser"], provenance.stage_w) and its
section of docs/accuracy.md (between <!-- browser:begin --> and <!-- browser:end -->).

Run: /usr/bin/python3 -m scripts.calibration.calibrate_browser   (after stage E, calibrate_cpu.py)
"""
import json
import math

import numpy as np
from scipy.optimize import minimize

from scripts import paths
from scripts.calibration.calibrate_cpu import fit_sample, metrics
from scripts.cli import no_options
from scripts.measure import probe_web
from scripts.roofline.cpu_rows import ort_queries, web_rows
from scripts.roofline.perfcard_eval import refresh_manifest, run_queries, write_constants
from scripts.training.report import replace_section

CONSTANTS = paths.ROOFLINE_JSON
DEVICES = paths.DEVICES_JSON
RUNTIME = "onnxruntime-web"
FAMILY = probe_web.FAMILY


def queries(df):
    return ort_queries(df, runtime=RUNTIME)


def with_browser(doc, theta):
    """theta: log matrix speed over the probe's, logit pointwise efficiency, logit mem_eff, log dispatch us.
    onnxruntime-web's MLAS kernels (register-blocked, SIMD) multiply matrices several times faster than the
    probe's plain loop, so the matrix figure is a ratio that may exceed 1: as in stage E it is split into
    the family's clock_ratio (the smallest >= 1, scaling the probe's rate for every kernel) and an
    efficiency <= 1; pointwise kernels get their efficiency of that scaled rate. The family starts as a
    copy of the cpu family (k_half, tile, l2 term), the runtime as a copy of onnxruntime's (its fusions and
    memory constants: the same graph optimizer, compiled to wasm)."""
    d = json.loads(json.dumps(doc))
    fam = dict(d["families"]["cpu"])
    product = math.exp(theta[0])
    fam["clock_ratio"] = max(1.0, product)
    fam["gemm_eff_fp32"] = fam["conv_eff_fp32"] = product / fam["clock_ratio"]
    fam["vector_eff"] = 1 / (1 + math.exp(-theta[1]))
    fam["mem_eff"] = 1 / (1 + math.exp(-theta[2]))
    d["families"][FAMILY] = fam
    d["arch_family"][FAMILY] = FAMILY
    rt = dict(d["runtimes"]["onnxruntime"])
    rt["dispatch_us"] = math.exp(theta[3])
    rt["source"] = ("fitted by scripts/calibration/calibrate_browser.py (stage W) on onnxruntime-web rows; memory "
                    "constants copied from onnxruntime (not measured in the browser)")
    d["runtimes"][RUNTIME] = rt
    return d


# The search range of theta (with_browser): the matrix ratio 0.01..100 (a plain loop against tuned kernels,
# both on the probed core), the two efficiencies as logits, the per-kernel cost 0.01 us..10 ms.
BOUNDS = [(math.log(1e-2), math.log(100.0)), (-7.0, 7.0), (-7.0, 7.0), (math.log(0.01), math.log(1e4))]


def at_bounds(fitted):
    """The fitted constants (provenance.stage_w.fitted) that ended at an end of their search range: the fit
    put what they would describe into the others, so their value is not a measurement of that quantity."""
    def logit(p):
        return math.log(p / (1 - p)) if p < 1 else math.inf
    theta = [math.log(fitted["clock_ratio"] * fitted.get("gemm_eff_fp32", 1.0)), logit(fitted["vector_eff"]),
             logit(fitted["mem_eff"]), math.log(fitted["onnxruntime_web_dispatch_us"])]
    names = ["the matrix ratio", "the pointwise efficiency", "the memory efficiency", "the per-kernel cost"]
    # Rounded to 4 places in the provenance: 0.005 in theta space tells an end from a value near it.
    return [n for n, t, (lo, hi) in zip(names, theta, BOUNDS) if t <= lo + 5e-3 or t >= hi - 5e-3]


def fit_constants(doc, train, cat):
    """Stage W's fit on `train` (rows of the training families): (constants, optimizer result, the rows fitted)."""
    fit = fit_sample(train)
    q_fit = queries(fit)

    # Every family weighs the same: NAS-Bench-201 cells are most of the rows (small and quick to measure)
    # and would otherwise set the constants for the models a visitor opens.
    weight = 1.0 / fit.family.map(fit.family.value_counts()).values
    weight /= weight.sum()

    def objective(theta):
        res = run_queries(q_fit, with_browser(doc, theta), devices=cat)
        e = np.log(np.array([r["latency_ms"] for r in res]) / fit.latency_ms.values)
        return float(np.sum(weight * e ** 2))

    opt = None
    for x0 in ([math.log(1.0), 0.0, 0.0, math.log(5.0)], [math.log(5.0), -1.0, 1.0, math.log(20.0)]):
        o = minimize(objective, np.array(x0), method="Nelder-Mead", bounds=BOUNDS,
                     options={"maxiter": 600, "xatol": 1e-3, "fatol": 1e-7})
        if opt is None or o.fun < opt.fun:
            opt = o
    return with_browser(doc, opt.x), opt, fit


def score_rows(df, constants, cat):
    """Figures of `df` predicted with `constants`, pooled and per environment (None without rows)."""
    if not len(df):
        return None
    res = run_queries(queries(df), constants, devices=cat)
    out = metrics([r["latency_ms"] for r in res], df.latency_ms)
    out["by_env"] = {env: metrics([r["latency_ms"] for r, e in zip(res, df.env) if e == env],
                                  df.latency_ms[df.env == env]) for env in sorted(df.env.unique())}
    return out


def unseen_machines(doc, rows, cat):
    """Leave one machine out: stage W fitted on the other machines' training families and scored on every
    row of one machine (and on its held-out families alone). A visitor's machine is always one the fit never
    saw, so this, not the held-out families of the machines it saw, is the "this device" row's error."""
    return leave_each_machine_out(rows, lambda others: fit_constants(doc, others, cat)[0],
                                  lambda df, constants: score_rows(df, constants, cat))


def leave_each_machine_out(rows, fit, score, describe=lambda constants: {}):
    """Each machine of `rows` left out in turn (stages W and P): `fit`(the other machines' training-family rows)
    -> constants, `score`(rows, constants) -> figures or None. {machine_id: {"all": figures, "held_out_families":
    figures, "fitted_on": [machine ids], "fit_rows", "fit_families", "counts", **describe(constants)}}; empty
    with fewer than two machines. A machine `counts` towards the pooled figure when the fit without it had
    MIN_FIT_ROWS rows of MIN_FIT_FAMILIES families and it has MIN_HELD_ROWS held-out rows: a fit on a handful
    of rows, or two rows scored, would say little of an unseen machine."""
    out = {}
    machines = sorted(rows.machine_id.unique())
    for m in machines if len(machines) > 1 else []:
        others = rows[(rows.machine_id != m) & (rows.split == "train")].reset_index(drop=True)
        if len(others) < 5:
            continue
        constants = fit(others)
        mine = rows[rows.machine_id == m].reset_index(drop=True)
        held = mine[mine.split == "test"].reset_index(drop=True)
        out[m] = {"all": score(mine, constants), "held_out_families": score(held, constants),
                  "fitted_on": sorted(set(others.machine_id)), "fit_rows": int(len(others)),
                  "fit_families": int(others.family.nunique()),
                  "counts": bool(len(others) >= MIN_FIT_ROWS and others.family.nunique() >= MIN_FIT_FAMILIES
                                 and len(held) >= MIN_HELD_ROWS), **describe(constants)}
    return out


MIN_FIT_ROWS, MIN_FIT_FAMILIES, MIN_HELD_ROWS = 30, 5, 5


def set_family_accuracy(doc, family, unseen, held, what, stage):
    """A probed family's uncertainty (doc's accuracy[family]) from its stage's fit (W, P): the pooled figure of
    the machines left out where there is one, else the held-out families' of the one machine, else none (an
    earlier fit's figure would otherwise be shown as this one's). what: the rows in words."""
    lomo, acc = pooled(unseen), doc.setdefault("accuracy", {})
    if lomo:
        acc[family] = {"mape": lomo["mape"], "rows": lomo["rows"],
                       "source": f"held-out families of our {what} of {len(unseen)} machines, each predicted with "
                                 f"{stage} fitted on the other machines' training families (leave one machine out, {stage})"}
    elif held:
        acc[family] = {"mape": held["mape"], "rows": held["rows"],
                       "source": f"held-out families of our {what}, one machine ({stage})"}
    else:
        acc.pop(family, None)


def pooled(unseen, key="held_out_families"):
    """The unseen-machine figures of every machine together, weighted by rows: {"mape", "rows"} or None.
    By default of the held-out families only: a visitor opens a model the fit never saw on a machine it
    never saw, and a machine's rows of the training families would flatter that."""
    got = [u[key] for u in unseen.values() if u[key] and u.get("counts")]
    n = sum(g["rows"] for g in got)
    return {"mape": sum(g["mape"] * g["rows"] for g in got) / n, "rows": n} if n else None


def main():
    with open(CONSTANTS) as f:
        doc = json.load(f)
    entries = probe_web.device_entries()
    if not entries:
        raise SystemExit("no probes in data/measured/machine_probe.json: run scripts.measure.probe_web first")
    cat = probe_web.catalog_with_probes(entries)
    rows, counts = web_rows(entries)
    train, test = rows[rows.split == "train"].reset_index(drop=True), rows[rows.split == "test"].reset_index(drop=True)
    if len(train) < 5:
        raise SystemExit(f"only {len(train)} drift-free onnxruntime-web training rows with a probe: measure more "
                         "(scripts/measure/campaign_web.py)")
    fitted, opt, fit = fit_constants(doc, train, cat)
    score = lambda df: score_rows(df, fitted, cat)  # noqa: E731
    unseen = unseen_machines(doc, rows, cat)

    prov = json.loads(fitted["provenance"])
    prov["browser"] = "stage W (scripts/calibration/calibrate_browser.py): onnxruntime-web relative to the probe; see stage_w"
    prov["stage_w"] = {
        "script": "scripts/calibration/calibrate_browser.py",
        "source": "data/measured/web_ort_wasm.csv (drift-free, 1 thread) and data/measured/machine_probe.json",
        "machines": sorted({m for m, _ in entries if m in set(rows.machine_id)}),
        "rows": counts,
        "split": "by model family (sha1 hash, as every stage): fitted on the training families, scored on the others",
        "train_rows": int(len(train)), "fit_rows": int(len(fit)),
        "train_families": sorted(train.family.unique().tolist()),
        "held_out_families": sorted(test.family.unique().tolist()),
        "fitted": {k: round(fitted["families"][FAMILY][k], 4) for k in ("clock_ratio", "gemm_eff_fp32", "vector_eff", "mem_eff")}
                  | {"onnxruntime_web_dispatch_us": round(fitted["runtimes"][RUNTIME]["dispatch_us"], 3)},
        "relative_to": "the probe's rates, not datasheet peaks: peak_fp32_gflops = the probe's matrix product, "
                       "memory_bandwidth_gbs = its read rate",
        "weighting": "each training family weighs the same in the fit (its rows share 1 / families)",
        "train_rmse_log": round(math.sqrt(opt.fun), 4),
        "in_sample": score(train),
        "held_out": score(test),
        "unseen_machines": unseen,
    }
    fitted["provenance"] = json.dumps(prov, sort_keys=True)
    set_family_accuracy(fitted, FAMILY, unseen, prov["stage_w"]["held_out"], "onnxruntime-web rows", "stage W")
    write_constants(fitted, CONSTANTS)
    replace_section(section(prov["stage_w"]), BEGIN, END, HEADING, update=True, check=False, what="browser")
    print(json.dumps(prov["stage_w"], indent=1))
    refresh_manifest()


BEGIN, END = "<!-- browser:begin -->", "<!-- browser:end -->"
HEADING = "This device: onnxruntime-web in the browser (stage W)"


def section(w):
    """docs/accuracy.md's figures of the "this device" row, from stage W's provenance."""
    f = w["fitted"]
    lines = [BEGIN,
             "Written by `/usr/bin/python3 -m scripts.calibration.calibrate_browser`. The page's \"Measure this device\" row",
             "predicts onnxruntime-web (wasm, one thread) on the visitor's machine from PerfCard's probe of it (an f32",
             "matrix product and a memory read; [this-device.md](this-device.md)), with the roofline's `browser` family.",
             f"Rows: our drift-free onnxruntime-web measurements of machines with a probe ({', '.join(w['machines'])}),",
             "each predicted with its own machine's and environment's probe; split by model family, each training",
             "family weighing the same in the fit.", "",
             "| split | environment | rows | MAPE | median APE | Kendall tau |", "|---|---|---:|---:|---:|---:|"]
    for label, key in (("held-out families", "held_out"), ("in-sample (fitted)", "in_sample")):
        m = w[key]
        if not m:
            continue
        for env, e in sorted(m["by_env"].items()):
            lines.append(f"| {label} | {env} | {e['rows']} | {e['mape']:.1%} | {e['median_ape']:.1%} | {e['kendall_tau']:.2f} |")
        lines.append(f"| {label} | both | {m['rows']} | {m['mape']:.1%} | {m['median_ape']:.1%} | {m['kendall_tau']:.2f} |")
    lines += ["", f"Training families: {', '.join(w['train_families'])}; held out: {', '.join(w['held_out_families'])}.",
              f"Fitted: onnxruntime-web's matrix kernels at {f['clock_ratio']:.2f}x the probe's matrix rate, pointwise",
              f"kernels at {f['vector_eff']:.2f} of that, memory at {f['mem_eff']:.2f} of the probe's read rate,",
              f"{f['onnxruntime_web_dispatch_us']:.2f} µs per kernel."]
    ends = at_bounds(f)
    if ends:
        lines += [f"At an end of its search range: {', '.join(ends)}. The fit put what {'it' if len(ends) == 1 else 'they'} would "
                  "describe into the other constants (small kernels' cost into the pointwise efficiency, say), so the",
                  "value above is not a measurement of it; the held-out figures are what the fit is judged by."]
    unseen = w.get("unseen_machines") or {}
    if not unseen:
        lines += ["One machine: the held-out rows are new models, not new machines or browsers.", END]
        return "\n".join(lines)
    lines += ["", "**A machine the fit never saw** (what a visitor's machine is): each machine's rows predicted with stage W",
              "fitted on the other machines' training families only. The \"this device\" row's uncertainty is the pooled",
              "held-out-family figure (`accuracy.browser` in weights/roofline.json): a new model on a new machine.", "",
              "| left-out machine | fitted on | rows | environment | MAPE | median APE | Kendall tau | held-out families: rows, MAPE |",
              "|---|---|---:|---|---:|---:|---:|---|"]
    for m, u in sorted(unseen.items()):
        a, h = u["all"], u["held_out_families"]
        for env, e in sorted(a["by_env"].items()):
            he = (h or {}).get("by_env", {}).get(env)
            lines.append(f"| {m}{'' if u.get('counts') else ' (not counted)'} | {', '.join(u['fitted_on'])} ({u.get('fit_rows')} rows) | {e['rows']} | {env} | {e['mape']:.1%} | "
                         f"{e['median_ape']:.1%} | {e['kendall_tau']:.2f} | " + (f"{he['rows']}, {he['mape']:.1%}" if he else "none") + " |")
    p, a = pooled(unseen), pooled(unseen, "all")
    lines += ["", f"A left-out machine counts when the fit without it had {MIN_FIT_ROWS} rows of {MIN_FIT_FAMILIES} "
              f"families and it has {MIN_HELD_ROWS} held-out rows. " +
              (("Pooled over the counted machines: " +
                (f"held-out families {p['rows']} rows, MAPE {p['mape']:.1%} (the row's uncertainty); " if p else "") +
                f"every family {a['rows']} rows, MAPE {a['mape']:.1%}.") if a else
               "None counts yet: the row's uncertainty stays the held-out families' figure above."), END]
    return "\n".join(lines)


if __name__ == "__main__":
    no_options(__doc__)
    main()
