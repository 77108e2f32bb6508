"""Stage P of the roofline calibration: the "cpu-probed" family, onnxruntime natively on a CPU the catalog lacks,
known only by PerfCard's probe (`perfcard predict MODEL --device this-machine`, `perfcard probe --cpu`).

A machine the CLI runs on has no datasheet peak PerfCard can trust (a cloud guest reports a TSC clock, not the
clock it runs at, and the FLOPs per cycle of its core take a table per microarchitecture), so the CLI measures
it: the probe's one-thread f32 matrix product in cache and read over a buffer larger than L3, each times the
physical cores, make the entry (perfcard/machine_probe.h, probe_cpu_entry; arch "cpu-probed"). This family
holds what onnxruntime's kernels reach of those rates. It keeps stage E's constants (the cpu family's
efficiencies and onnxruntime's per-kernel cost: how onnxruntime's kernels compare with each other, fitted on
the build VM's ~2,000 models) and fits two ratios, the clock ratio (matrix and pointwise peaks over the probe's
matrix rate) and the bandwidth ratio (onnxruntime's streaming over the probe's read), on our onnxruntime-node
rows (data/measured/cpu_ort_node.csv, drift-free) of every machine with a native probe
(data/measured/machines.json) but the build VM stage E fitted on, each row on its own machine's entry. Fitted on
the training families (the split every stage uses), each family weighing the same; each machine is also left
out in turn (fitted on the others' training families, scored on its held-out families): a machine the CLI
probes is never one we measured, so that figure, pooled, is the family's accuracy (the rows' uncertainty).

Writes weights/roofline.json (families["cpu-probed"], arch_family, accuracy["cpu-probed"], provenance.stage_p)
and its section of docs/accuracy.md (between <!-- cpu-probed:begin --> and <!-- cpu-probed:end -->).
Rerun after stage E (scripts/calibrate.sh runs it after calibrate_cpu and calibrate_browser).

Run: /usr/bin/python3 -m scripts.calibration.calibrate_cpu_probe [--check]
"""
import argparse
import json
import math
import sys

import numpy as np
import pandas as pd
from scipy.optimize import minimize

from scripts import paths
from scripts.calibration.calibrate_browser import leave_each_machine_out, pooled, set_family_accuracy
from scripts.calibration.calibrate_cpu import fit_sample, metrics
from scripts.measure import machines, probe_web
from scripts.roofline import cpu_rows
from scripts.roofline.perfcard_eval import run_queries, write_constants
from scripts.training.report import replace_section

CONSTANTS = paths.ROOFLINE_JSON
FAMILY = "cpu-probed"  # perfcard/machine_probe.h kProbedCpuArch: the entries' arch, mapped to this family
BASE = "cpu"
FITTED = ("clock_ratio", "bandwidth_ratio")
FORMAT = "1.1"
# log-space bounds: a probe's plain loop reaches 1/30 to 1 of what onnxruntime's kernels do per core; a read of
# one thread 1/8 to 8 times what its streaming kernels move.
BOUNDS = [(math.log(1.0), math.log(30.0)), (math.log(1 / 8), math.log(8.0))]
STARTS = ([math.log(8.0), math.log(2.0)], [math.log(3.0), 0.0])


def with_family(doc: dict, theta) -> dict:
    """The constants with the cpu-probed family: stage E's cpu family, its clock and bandwidth ratios exp(theta)."""
    d = json.loads(json.dumps(doc))
    fam = dict(d["families"][BASE])
    fam["clock_ratio"], fam["bandwidth_ratio"] = (math.exp(t) for t in theta)
    d["families"][FAMILY] = fam
    d["arch_family"][FAMILY] = FAMILY
    return d


def predict(df: pd.DataFrame, constants: dict, catalog: dict) -> np.ndarray:
    res = run_queries(cpu_rows.ort_queries(df), constants, devices=catalog)
    return np.array([r["latency_ms"] for r in res])


def fit(doc: dict, train: pd.DataFrame, catalog: dict):
    """Stage P's fit on `train` (rows of the training families): (constants, optimizer result, rows fitted)."""
    sample = fit_sample(train)
    weight = 1.0 / sample.family.map(sample.family.value_counts()).values
    weight /= weight.sum()

    def objective(theta):
        e = np.log(predict(sample, with_family(doc, theta), catalog) / sample.latency_ms.values)
        return float(np.sum(weight * e ** 2))

    best = None
    for x0 in STARTS:
        o = minimize(objective, np.array(x0), method="Nelder-Mead", bounds=BOUNDS,
                     options={"maxiter": 200, "xatol": 1e-3, "fatol": 1e-7})
        if best is None or o.fun < best.fun:
            best = o
    return with_family(doc, best.x), best, sample


def figures(pred: np.ndarray, df: pd.DataFrame) -> dict | None:
    """metrics() of predictions `pred` of `df`'s rows with the median signed error (predicted / measured - 1);
    None without rows."""
    if not len(df):
        return None
    out = metrics(pred, df.latency_ms)
    out["median_signed"] = round(float(np.median(pred / df.latency_ms.values - 1)), 4)
    return out


def score(df: pd.DataFrame, constants: dict, catalog: dict) -> dict | None:
    return figures(predict(df, constants, catalog), df) if len(df) else None


def unseen_machines(doc: dict, df: pd.DataFrame, catalog: dict) -> dict:
    """Each machine left out in turn (fitted on the other machines' training families, scored on its held-out
    families and on all its rows), with the ratios fitted without it."""
    return leave_each_machine_out(
        df, lambda others: fit(doc, others, catalog)[0], lambda rows, constants: score(rows, constants, catalog),
        lambda constants: {"fitted": {k: round(constants["families"][FAMILY][k], 4) for k in FITTED}})


def calibrate(doc: dict) -> tuple[dict, dict]:
    """(the constants with the fitted family, accuracy and provenance, stage P's record)."""
    entries = machines.probed_entries()
    df, counts = cpu_rows.probed_rows(entries)
    train, test = df[df.split == "train"].reset_index(drop=True), df[df.split == "test"].reset_index(drop=True)
    if len(train) < 5:
        raise SystemExit(f"only {len(train)} drift-free onnxruntime-node training rows of machines with a native "
                         "probe: measure another machine (scripts/measure/campaign.py records its probe)")
    catalog = probe_web.catalog_with_probes({m: entries[m] for m in sorted(set(df.machine_id))})
    fitted, opt, sample = fit(doc, train, catalog)
    held_pred = predict(test, fitted, catalog)
    unseen = unseen_machines(doc, df, catalog)
    record = {
        "script": "scripts/calibration/calibrate_cpu_probe.py",
        "source": "data/measured/cpu_ort_node.csv (drift-free) and the native probes of data/measured/machines.json",
        "machines": sorted(set(df.machine_id)), "rows": counts,
        "base": f"stage E's '{BASE}' family (efficiencies, onnxruntime's dispatch), its two ratios fitted here",
        "relative_to": "the probe's one-thread rates x the physical cores (perfcard/machine_probe.h, probe_cpu_entry)",
        "split": "by model family (sha1 hash, as every stage): fitted on the training families, scored on the others",
        "weighting": "each training family weighs the same in the fit (its rows share 1 / families)",
        "train_rows": int(len(train)), "fit_rows": int(len(sample)),
        "train_families": sorted(train.family.unique().tolist()),
        "held_out_families": sorted(test.family.unique().tolist()),
        "fitted": {k: round(fitted["families"][FAMILY][k], 4) for k in FITTED},
        "train_rmse_log": round(math.sqrt(opt.fun), 4),
        "in_sample": score(train, fitted, catalog), "held_out": figures(held_pred, test),
        "by_machine": {m: {"held_out": figures(held_pred[(test.machine_id == m).values], test[test.machine_id == m])}
                       for m in sorted(set(df.machine_id))},
        "unseen_machines": unseen,
    }
    prov = json.loads(fitted["provenance"])
    prov[FAMILY] = "stage P (scripts/calibration/calibrate_cpu_probe.py): onnxruntime relative to the native probe; see stage_p"
    prov["stage_p"] = record
    fitted["provenance"] = json.dumps(prov, sort_keys=True)
    set_family_accuracy(fitted, FAMILY, unseen, record["held_out"], "onnxruntime-node rows", "stage P")
    # bandwidth_ratio is new in format 1.1: a reader of 1.0 would ignore it and time this family's memory wrong.
    fitted["format_version"] = FORMAT
    return fitted, record


BEGIN, END = "<!-- cpu-probed:begin -->", "<!-- cpu-probed:end -->"
HEADING = "This machine natively: onnxruntime on a probed CPU (stage P)"


def pct(m: dict | None, key: str = "mape") -> str:
    return "-" if not m else f"{100 * m[key]:+.1f}%" if key == "median_signed" else f"{100 * m[key]:.1f}%"


def section(p: dict) -> str:
    out = [BEGIN, "",
           f"The `{FAMILY}` family: stage E's efficiencies with a clock ratio of {p['fitted']['clock_ratio']:.2f} over the "
           f"probe's one-thread matrix rate x cores and a bandwidth ratio of {p['fitted']['bandwidth_ratio']:.2f} over its "
           f"read x cores, fitted on {p['train_rows']} drift-free rows of {len(p['train_families'])} training families of "
           f"{len(p['machines'])} probed machines ({', '.join(p['machines'])}).", "",
           "| rows scored | fitted on | rows | MAPE | median APE | median signed | Kendall tau |",
           "|---|---|---:|---:|---:|---:|---:|"]

    def line(what, fitted_on, m):
        if m:
            out.append(f"| {what} | {fitted_on} | {m['rows']} | {pct(m)} | {pct(m, 'median_ape')} | "
                       f"{pct(m, 'median_signed')} | {m['kendall_tau']:.2f} |")

    line("training families, every machine", "every machine", p["in_sample"])
    line("held-out families, every machine", "every machine", p["held_out"])
    for mid, u in p["unseen_machines"].items():
        line(f"{mid} left out: its held-out families", ", ".join(u["fitted_on"]) + f" (ratios {u['fitted']['clock_ratio']:.2f}, "
             f"{u['fitted']['bandwidth_ratio']:.2f})", u["held_out_families"])
        line(f"{mid} left out: all its rows", ", ".join(u["fitted_on"]), u["all"])
    lomo = pooled(p["unseen_machines"])
    out += ["", ("Pooled over the machines left out (their held-out families): "
                 f"{100 * lomo['mape']:.1f}% MAPE on {lomo['rows']} rows: the family's uncertainty "
                 f"(`accuracy.{FAMILY}` in weights/roofline.json)." if lomo else
                 "No machine could be left out (one probed machine, or too few rows): the family's uncertainty is the "
                 "held-out families' figure, for new models on a machine the fit saw."), "", END]
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="refit and compare with the committed figures; write nothing")
    args = ap.parse_args(argv)
    with open(CONSTANTS) as f:
        doc = json.load(f)
    fitted, record = calibrate(doc)
    text = section(record)
    print(text)
    if args.check:
        return replace_section(text, BEGIN, END, HEADING, update=False, check=True, what=FAMILY)
    write_constants(fitted, CONSTANTS)
    return replace_section(text, BEGIN, END, HEADING, update=True, check=False, what=FAMILY)


if __name__ == "__main__":
    sys.exit(main())
