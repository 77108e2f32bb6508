"""Held-out accuracy of the roofline predictor on every public source it can match; writes
docs/accuracy.md and stores each device family's held-out MAPE in weights/roofline.json, where it
becomes the uncertainty every prediction shows.

Sources: NeuSight FP32 GEMM kernels (held-out shapes), timm eager whole models (held-out model
families on RTX 3090/4090; training families listed separately as in-sample), NVIDIA
DeepLearningExamples batch sweeps (V100, A100, T4; never fitted on) when scripts/data can parse them,
ML.ENERGY power and energy per token of LLM decoding (held-out families, scripts/roofline/energy.py).
Metrics per source, device and precision: rows, MAPE, median APE, Kendall's tau.

Run (after the calibration scripts; needs the zoo graphs the rows name, which it writes first):
  /usr/bin/python3 -m scripts.calibration.evaluate_roofline            prints the report, writes nothing
  /usr/bin/python3 -m scripts.calibration.evaluate_roofline --write    stores each family's held-out MAPE in
                                   weights/roofline.json and rewrites docs/accuracy.md's roofline part
                                   (scripts/calibrate.sh does)
  /usr/bin/python3 -m scripts.calibration.evaluate_roofline --check    exit 1, naming the differences, where
                                   the committed uncertainty or docs/accuracy.md's roofline part is not what
                                   the committed constants and ../shared give (its date line aside)
"""
import argparse
import datetime
import json
import os

import numpy as np
import pandas as pd
from scipy.stats import kendalltau

from scripts import paths
from scripts.roofline.gemm_models import write_gemm_models
from scripts.roofline.kernels import NEUSIGHT_DEVICES, gemm_queries, load_neusight
from scripts.roofline.perfcard_eval import catalog_devices, run_queries, write_constants
from scripts.roofline.whole_models import dle_rows, queries as model_queries, timm_rows
from scripts.roofline import energy
from scripts.roofline import cpu_rows
from scripts.roofline.cpu_rows import help_queries, help_rows, ort_queries, ort_rows
from scripts.roofline import mlperf_rows as mlperf
from scripts.calibration import calibrate_browser as browser
from scripts.measure import probe_web

CONSTANTS = paths.ROOFLINE_JSON
DOC = os.path.join(paths.DOCS, "accuracy.md")


def metrics(pred, meas):
    pred, meas = np.asarray(pred, float), np.asarray(meas, float)
    ape = np.abs(pred / meas - 1)
    tau = kendalltau(pred, meas).correlation if len(pred) > 2 else float("nan")
    return {"rows": int(len(pred)), "mape": float(np.mean(ape)), "median_ape": float(np.median(ape)),
            "kendall_tau": float(tau)}


def evaluate(df, qs, group_cols, source, split_label, constants, devices=None):
    res = run_queries(qs, constants, devices=devices)
    df = df.assign(pred=[r["latency_ms"] for r in res])
    out = []
    for key, g in df.groupby(group_cols):
        key = key if isinstance(key, tuple) else (key,)
        m = metrics(g.pred, g.latency_ms)
        out.append({"source": source, "split": split_label, **dict(zip(group_cols, key)), **m})
    return out, df


def energy_section(constants):
    """Held-out power and energy per token on ML.ENERGY (gamma refitted without each row's family)."""
    rows, skipped = energy.load_rows()
    energy.predict_rows(rows, constants)
    table = energy.device_power({r["device_id"] for r in rows})
    preds, gammas = energy.heldout_predictions(rows, float(constants["power"]["floor"]), table)
    df = pd.DataFrame(preds)
    fmt_tau = lambda t: "n/a" if t != t else f"{t:.2f}"  # noqa: E731  (nan: predictions tied within the group)
    lines = ["## Energy: power and energy per output token (ML.ENERGY, held-out families)", "",
             "Written by the same command (the stage fitted in `scripts/calibration/calibrate_power.py`). Each row is one",
             "vLLM serving configuration measured by ML.ENERGY (LLM decoding, single GPU, bf16); PerfCard predicts",
             "one decode step of the zoo's `<model>.decode` graph at the row's average batch with the KV cache at",
             "half the average output length, runtime `kernel` (vLLM replays CUDA graphs: no dispatch gaps; its",
             "paged/flash attention and fused kernels are not what the exported graph describes). Power and",
             "energy per token (= power x predicted step latency / batch) use the power exponent fitted without",
             "the row's model family (leave-one-family-out: " + ", ".join(f"{k} {v:.2f}" for k, v in sorted(gammas.items()))
             + "). v3's power is measured (all GPUs of the row); v2's is derived as J/token x tokens/s and never fitted on.", "",
             "| source | target | device | families | rows | MAPE | median APE | Kendall tau |",
             "|---|---|---|---|---:|---:|---:|---:|"]
    out = []
    for (src, dev), g in df.groupby(["source", "device_id"]):
        for target, pred, meas in (("power (W)", "power_pred_w", "power_w"),
                                   ("energy per token (J)", "energy_per_token_pred_j", "energy_per_token_j")):
            m = metrics(g[pred], g[meas])
            out.append(dict(source=src, target=target, device_id=dev, **m))
            lines.append(f"| {src} | {target} | {dev} | {', '.join(sorted(g.family.unique()))} | {m['rows']} | "
                         f"{m['mape']:.1%} | {m['median_ape']:.1%} | {fmt_tau(m['kendall_tau'])} |")
    lines += ["", "Rows left out (and why): " + "; ".join(f"{k}: {v}" for k, v in sorted(skipped.items())) + ".", "",
              "What this cannot tell: every matched decode step is memory-bound in PerfCard's model, so its busy",
              "fraction is 1 and its intensity is the device's memory-roof efficiency; the power formula then gives",
              "(nearly) one power per device and cannot follow the measured change with batch: its Kendall tau is",
              "about zero, the little spread left coming from per-family exponents and intensity rounding. Energy per",
              "token inherits the decode-latency error (the graph's attention reads a GQA-expanded KV cache that",
              "vLLM's kernels never materialize, so long-context rows are over-predicted).", ""]
    return lines, out


def cpu_section(constants):
    """Our onnxruntime-node rows (stage E's split) in the main table, and HELP's PyTorch-on-CPU rows apart."""
    rows = []
    ort, _ = ort_rows()
    for split, label in (("test", "held-out families"), ("train", "in-sample (fitted)")):
        part = ort[ort.split == split]
        if len(part):
            part = part.assign(prec="fp32", thr=[f"fp32, {t} thread{'s' if t > 1 else ''}, {z}"
                                                  for t, z in zip(part.threads, part.zoo_set)])
            r, _ = evaluate(part, ort_queries(part), ["device_id", "thr"], "onnxruntime-node CPU (ours)", label, constants)
            rows += [dict(x, precision=x.pop("thr")) for x in r]
    hr = help_rows(sample=2000, seed=0)
    help_table = []
    if len(hr):
        r, _ = evaluate(hr, help_queries(hr), ["help_device", "device_id"], "HELP NAS-Bench-201 (PyTorch CPU)",
                        "never fitted", constants)
        help_table = r
    lines = ["## CPUs", "",
             "The `cpu` family's constants are fitted by `scripts/calibration/calibrate_cpu.py` (stage E) on our own",
             "onnxruntime-node measurements of the build VM (`data/measured/cpu_ort_node.csv`, drift-free rows,",
             "split by model family; rows above). Each row is predicted with its own thread count (`threads` in",
             "the query, `--threads` on the CLI): one thread = one core of the catalog entry, compute and bandwidth",
             "scaled by the share of cores. Stage E's provenance (below) lists the fitted values and the split.",
             "The clock ratio the fit needs to keep the efficiencies at or below 1 (the VM runs above the clock it",
             "reports) is the build VM's own: its catalog entry carries it, so no other CPU is predicted faster than",
             "its datasheet peak.", "",
             "HELP's NAS-Bench-201 latencies on Xeons and a Raspberry Pi 4 (`help_latency_long.csv.gz`; a seeded",
             f"sample of {hr.arch_index.nunique() if len(hr) else 0} cells, batch 1) were measured with **PyTorch on CPU**,",
             "not ONNX Runtime. PerfCard predicts them with its only CPU runtime, `onnxruntime` (graph fusion, no",
             "per-op framework overhead), on every core (HELP does not state a thread count). Never fitted on: the",
             "rows say how far an onnxruntime prediction is from a PyTorch-eager CPU measurement, not how accurate",
             "the onnxruntime model is.", "",
             "| HELP device | predicted as | runtime assumed | rows | MAPE | median APE | Kendall tau |",
             "|---|---|---|---:|---:|---:|---:|"]
    for x in help_table:
        lines.append(f"| {x['help_device']} | {x['device_id']} | onnxruntime, all cores | {x['rows']} | {x['mape']:.1%} | "
                     f"{x['median_ape']:.1%} | {x['kendall_tau']:.2f} |")
    return rows, lines + [""]


def browser_section(constants):
    """Our onnxruntime-web rows (stage W's split), each predicted on its machine's probe ("this device"). A
    machine stage W's fit did not include (probed after it) is labelled as never fitted, both splits: its
    rows of the training families are new to the fit as well."""
    if "browser" not in constants["families"]:
        return []
    entries = probe_web.device_entries()
    web, _ = cpu_rows.web_rows(entries)
    cat = probe_web.catalog_with_probes(entries)
    fitted_machines = set(json.loads(constants.get("provenance", "{}")).get("stage_w", {}).get("machines", []))
    rows = []
    for split, label in (("test", "held-out families"), ("train", "in-sample (fitted)")):
        for seen in (True, False):
            part = web[(web.split == split) & (web.machine_id.isin(fitted_machines) == seen)]
            if not len(part):
                continue
            part = part.assign(prec=[f"fp32, 1 thread, {e}" for e in part.env])
            how = label if seen else f"machine never fitted, {'held-out' if split == 'test' else 'training'} families"
            r, _ = evaluate(part, browser.queries(part), ["machine_id", "prec"], "onnxruntime-web (ours, probed)", how,
                            constants, devices=cat)
            rows += [dict(x, precision=x.pop("prec"), device_id=x.pop("machine_id")) for x in r]
    return rows


GPU_OURS = "PyTorch eager whole models (ours)"
TIMM = "timm eager inference"
DLE = "DLE eager PyTorch ResNet-50 batch 1-256"


def gpu_ours_section(constants):
    """Our GPU campaigns' no_grad inference rows (scripts/measure/gpu_campaign.py, fp16, PyTorch eager: the
    default runtime on GPUs): whole models on the devices users pick, never fitted on for latency."""
    from scripts.calibration.evaluate_gpu_ours import load, query
    rows = [r for r in load()[0] if r["protocol"] == "inference"]
    if not rows:
        return []
    df = pd.DataFrame({"device_id": [r["device_id"] for r in rows], "prec": [r["precision"] for r in rows],
                       "latency_ms": [r["median_ms"] for r in rows]})
    r, _ = evaluate(df, [query(x, "roofline") for x in rows], ["device_id", "prec"], GPU_OURS, "never fitted",
                    constants)
    return [dict(x, precision=x.pop("prec")) for x in r]


# Where a family's uncertainty comes from, first found first: whole models in the runtime the rows are
# predicted for (ours on the GPUs users pick, then timm and DLE), kernels only where no whole model was measured.
UNCERTAINTY_SOURCES = (GPU_OURS, TIMM, DLE,
                       "NeuSight GEMM kernels", "onnxruntime-node CPU (ours)", "onnxruntime-web (ours, probed)")


def family_accuracy(table, family_devices):
    """{family: {"mape", "rows", "source"}}: per family, the first source of UNCERTAINTY_SOURCES with at least
    five held-out rows on its devices (`family_devices`: family -> device ids), their rows-weighted MAPE."""
    acc = {}
    for fam, devs in family_devices.items():
        for source in UNCERTAINTY_SOURCES:
            sel = table[(table.source == source) & table.device_id.isin(devs) & ~table.split.str.startswith("in-sample")]
            if len(sel) and sel.rows.sum() >= 5:
                mape = float((sel.mape * sel.rows).sum() / sel.rows.sum())
                acc[fam] = {"mape": round(mape, 4), "rows": int(sel.rows.sum()), "source": f"{source}, {sel.split.iloc[0]}"}
                break
    return acc


# Eager GPU sources whose latencies no stage fitted, by the name rows.py gives them: the hosts differ
# between them (PyTorch versions, CPUs), which is what a host-bound row's uncertainty has to carry.
HOST_BOUND_SOURCES = {"gpu_ours": GPU_OURS, "dle": DLE,
                      "help_gpu": "HELP NAS-Bench-201 on GPUs (PyTorch, batch 1, 32, 256)"}
MIN_HOST_BOUND_ROWS = 5
# Host times per kernel (us) tried per source, to say which host each source measured (--host-us guidance).
HOST_US_GRID = (15, 20, 25, 30, 35, 40, 50, 65, 80, 100, 130)


def host_bound_accuracy(per_source):
    """The uncertainty entry of host-bound rows from {source: (rows, mape)}: the mean of the per-source MAPEs
    of sources with MIN_HOST_BOUND_ROWS host-bound rows, each source weighing the same (one host would
    otherwise speak for all), or None when no source has enough."""
    used = {k: v for k, v in per_source.items() if v[0] >= MIN_HOST_BOUND_ROWS}
    if not used:
        return None
    return {"mape": round(float(np.mean([m for _, m in used.values()])), 4), "rows": int(sum(n for n, _ in used.values())),
            "source": "mean over sources of the MAPE of the rows the roofline predicts host-bound: "
                      + ", ".join(f"{HOST_BOUND_SOURCES[k]} {m:.1%} ({n} rows)" for k, (n, m) in used.items())}


def host_bound_section(constants):
    """The rows the roofline predicts host-bound (the core's `host_bound`) in each eager GPU source never
    fitted on latency: (the uncertainty entry for pytorch-eager or None, the doc's lines)."""
    from scripts.training import rows as trows
    from scripts.calibration.calibrate_eager_gpu import with_constants
    makers = {"gpu_ours": trows.gpu_ours_rows, "dle": trows.dle_rows, "help_gpu": lambda: trows.help_gpu_rows(1000)}
    per, lines = {}, []
    for key, make in makers.items():
        df = make()
        df = df[df.model.map(os.path.exists)] if len(df) else df
        if not len(df):
            continue
        queries = trows.queries(df)
        res = run_queries(queries, constants)
        hb = np.array([r["host_bound"] for r in res])
        pred = np.array([r["latency_ms"] for r in res])[hb]
        meas = df.latency_ms.values[hb]
        if not hb.any():
            lines.append(f"| {HOST_BOUND_SOURCES[key]} | 0 of {len(df)} | | | | |")
            continue
        m = metrics(pred, meas)
        per[key] = (m["rows"], m["mape"])
        # The host this source measured: the time per kernel that fits its host-bound rows best (same rows).
        qs = [q for q, b in zip(queries, hb) if b]
        grid = sorted({*HOST_US_GRID, constants["runtimes"]["pytorch-eager"]["dispatch_us"]})
        scan = {us: metrics([r["latency_ms"] for r in run_queries(qs, with_constants(constants, dispatch_us=us))], meas)["mape"]
                for us in grid}
        best = min(scan, key=scan.get)
        lines.append(f"| {HOST_BOUND_SOURCES[key]} | {m['rows']} of {len(df)} | {m['mape']:.1%} | "
                     f"{float(np.median(pred / meas - 1)):+.1%} | {best:g} us: {scan[best]:.1%} | "
                     f"{', '.join(sorted(set(df.device_id[hb])))} |")
    entry = host_bound_accuracy(per)
    out = ["## Host-bound rows", "",
           "Where the roofline predicts the device busy less than half of the latency (`host_bound` in the predict",
           "document), eager PyTorch's host sets the time: its cost per kernel differs between machines (PyTorch",
           "versions, CPUs) more than any GPU family's constants do. Such a row carries at least the mean, over the",
           "eager GPU sources no stage fitted on latency, of each source's MAPE on its host-bound rows (each source",
           "weighs the same); a family's own figure stays where it is larger. The host time per kernel that fits",
           "a source's host-bound rows best (of " + ", ".join(f"{u:g}" for u in HOST_US_GRID) + " us and the shipped "
           f"`dispatch_us`, {constants['runtimes']['pytorch-eager']['dispatch_us']:g}) says which host it measured: "
           "`--host-us` (the page's Host field) sets it for a prediction.", "",
           "| source | host-bound rows | MAPE | median signed | best host time per kernel: MAPE | devices |",
           "|---|---:|---:|---:|---:|---|", *lines, "",
           (f"Shipped for `pytorch-eager` (weights/roofline.json `host_bound_accuracy`): {entry['mape']:.1%} over "
            f"{entry['rows']} rows." if entry else "No source has host-bound rows: nothing is shipped."), ""]
    return entry, out


def mlperf_section(constants):
    """MLPerf Inference closed-division single-accelerator rows: never fitted, another runtime (TensorRT)."""
    df = mlperf.mlperf_rows()
    lines = ["## MLPerf Inference (never fitted; TensorRT measured, runtime `kernel` predicted)", "",
             "Closed division, VALID, one accelerator of the catalog (`mlperf_inference_results.csv.gz`,",
             "`load_mlperf_inference_results`), benchmarks with a zoo graph: ResNet-50 (torchvision `resnet50`)",
             "SingleStream latency per query at batch 1 and Offline samples/s; BERT (`bert-99`, `bert-99.9` = zoo",
             "`bert-large-uncased` at sequence 384) Offline samples/s. Submissions run TensorRT engines (INT8 for",
             "resnet50 and bert-99, FP16 for bert-99.9, predicted at those precisions); PerfCard's closest runtime",
             "is `kernel` (no host dispatch, as an engine replay) but without TensorRT's layer fusion and kernel",
             f"selection. Offline results state no batch size: predicted throughput = {mlperf.OFFLINE_BATCH} / latency at batch",
             f"{mlperf.OFFLINE_BATCH} (an assumption). GPT-J, Llama-2-70B and Llama 3.1 serving rows are left out: token",
             "throughput of a serving engine needs a batching model PerfCard does not have yet. APE is on the row's",
             "target; the signed median says which way the error goes.", "",
             "| benchmark | scenario | target | device | rows | MAPE | median APE | median signed error | Kendall tau |",
             "|---|---|---|---|---:|---:|---:|---:|---:|"]
    out = []
    if not len(df):
        return out, lines + ["No rows matched.", ""]
    res = run_queries(mlperf.mlperf_queries(df), constants)
    df = df.assign(pred=mlperf.predicted_target(df, res).values)
    for (b, sc, t, dev), g in df.groupby(["model", "mlperf_scenario", "target", "device_id"]):
        m = metrics(g.pred, g.measured)
        signed = float(np.median(g.pred / g.measured - 1))
        tau = "n/a" if m["kendall_tau"] != m["kendall_tau"] else f"{m['kendall_tau']:.2f}"
        lines.append(f"| {b} | {sc} | {t} | {dev} | {m['rows']} | {m['mape']:.1%} | {m['median_ape']:.1%} | "
                     f"{signed:+.1%} | {tau} |")
        out.append(dict(benchmark=b, scenario=sc, device_id=dev, **m))
    pooled = metrics(df.pred, df.measured)
    lat = df[df.target == "latency_ms"]
    tau_ss = metrics(lat.pred, lat.measured)["kendall_tau"] if len(lat) > 2 else float("nan")
    lines += ["", f"All {pooled['rows']} rows: MAPE {pooled['mape']:.1%}, median APE {pooled['median_ape']:.1%}. Within one",
              "group every row is the same model, batch and device, so predictions tie and tau is n/a; across devices,",
              f"ResNet-50 SingleStream latency ranks with Kendall tau {tau_ss:.2f} ({len(lat)} rows).", ""]
    return out, lines


def l2_section(prov):
    """Before/after of the L2 term, from stage C's record (both fits are made there)."""
    l2 = prov.get("stage_c", {}).get("l2_term")
    if not l2:
        return []
    a, b = l2["held_out_mape_without"], l2["held_out_mape_with"]
    lines = ["## L2-aware memory term: before / after (timm held-out families)", "",
             "Term: " + l2["term"] + ". Stage C fits the whole-model constants twice, without the term and with",
             "a per-family `l2_bw_ratio`; the term is kept only if the pooled held-out MAPE falls. Fitted ratios: "
             + ", ".join(f"{k} {v}" for k, v in sorted(l2["fitted_ratio"].items())) + f"; kept: **{'yes' if l2['kept'] else 'no'}**.", "",
             "| held-out rows | without L2 term | with L2 term |", "|---|---:|---:|"]
    for k in sorted(k for k in a if k not in ("rows",)):
        lines.append(f"| {k} | {a[k]:.1%} | {b[k]:.1%} |")
    lines += [f"| training fit (RMSE of log ratio) | {l2['train_rmse_log_without']} | {l2['train_rmse_log_with']} |",
              "", f"({a['rows']} held-out rows; other families: {l2['other_families']}.)", ""]
    return lines


def generated_sections(path: str) -> str:
    """What other scripts write into the document (from its first `<!-- name:begin` marker on: the learned
    predictors, memory, our GPU rows, the browser family), kept as it is: this script writes the part above
    it, and rewriting the whole file would drop their figures until each of those scripts ran again."""
    if not os.path.exists(path):
        return ""
    with open(path) as f:
        return generated_sections_of(f.read())


def generated_sections_of(text: str) -> str:
    lines = text.split("\n")
    first = next((k for k, line in enumerate(lines) if line.startswith("<!-- ") and ":begin" in line), None)
    if first is None:
        return ""
    above = first - 1
    while above >= 0 and not lines[above].strip():
        above -= 1
    if above >= 0 and lines[above].startswith("## "):  # a section whose heading is written above its marker
        first = above
    return "\n".join(lines[first:])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="store the uncertainty and rewrite the report")
    mode.add_argument("--check", action="store_true", help="exit 1 where the committed figures differ")
    args = ap.parse_args(argv)
    rows = []
    with open(CONSTANTS) as f:
        constants = json.load(f)  # the working tree's constants, not the copy embedded at the last build
    # NeuSight: held-out shapes only.
    full, _ = load_neusight(10**9)
    test = full[full.split == "test"].groupby("device", group_keys=False).apply(lambda g: g.sample(min(len(g), 1500), random_state=1))
    gemm_paths = write_gemm_models(os.path.join(paths.BUILD, "calibration"))
    test = test.assign(device_id=test.device.map(lambda d: NEUSIGHT_DEVICES[d][0]), precision="fp32")
    r, _ = evaluate(test, gemm_queries(test, gemm_paths), ["device_id", "precision"], "NeuSight GEMM kernels", "held-out shapes", constants)
    rows += r
    # timm: held-out families, and training families as in-sample.
    t = timm_rows()
    for split, label in (("test", "held-out families"), ("train", "in-sample (fitted)")):
        part = t[t.split == split]
        if len(part):
            r, _ = evaluate(part, model_queries(part), ["device_id", "prec"], TIMM, label, constants)
            rows += [dict(x, precision=x.pop("prec")) for x in r]
    # NVIDIA DeepLearningExamples: never fitted on, so every row is held out.
    dle = dle_rows()
    if len(dle):
        r, _ = evaluate(dle, model_queries(dle), ["device_id", "prec"], DLE,
                        "never fitted", constants)
        rows += [dict(x, precision=x.pop("prec")) for x in r]
    cpu_rows, cpu_lines = cpu_section(constants)
    _, mlperf_lines = mlperf_section(constants)
    rows += cpu_rows
    rows += browser_section(constants)
    rows += gpu_ours_section(constants)
    table = pd.DataFrame(rows)
    energy_lines, _ = energy_section(constants)

    # Uncertainty per family: whole-model held-out MAPE where it exists, else kernel-level held-out MAPE.
    with open(CONSTANTS) as f:
        doc = json.load(f)
    devices = catalog_devices()  # each device's family is the core's
    family_devices = {
        fam: [d["id"] for d in devices if d["family"] == fam]
        + (sorted(set(table.device_id[table.source == "onnxruntime-node CPU (ours)"])) if fam == "cpu" else [])
        + (sorted(set(table.device_id[table.source == "onnxruntime-web (ours, probed)"])) if fam == "browser" else [])
        for fam in doc["families"]}
    acc = family_accuracy(table, family_devices)
    # The probed families' figures are their stages' where they wrote one: calibrate_browser (stage W) and
    # calibrate_cpu_probe (stage P), run before this report by scripts/calibrate.sh, own them (held-out
    # families of their fit, or leaving each machine out); no catalog device is of either family.
    for fam, stage in (("browser", "stage W"), ("cpu-probed", "stage P")):
        if stage in doc.get("accuracy", {}).get(fam, {}).get("source", ""):
            acc[fam] = doc["accuracy"][fam]
    doc["accuracy"] = acc
    host_entry, host_lines = host_bound_section(constants)
    # Eager's entry is this report's; other runtimes' are their stages' (stage H: pytorch-cuda-graphs).
    host = {k: v for k, v in doc.pop("host_bound_accuracy", {}).items() if k != "pytorch-eager"}
    if host_entry:
        host["pytorch-eager"] = host_entry
    if host:
        doc["host_bound_accuracy"] = host

    prov = json.loads(doc["provenance"])
    lines = ["# Accuracy of the roofline predictor (" + doc["version"] + ")", "",
             "Written by `/usr/bin/python3 -m scripts.calibration.evaluate_roofline --write` on " + datetime.date.today().isoformat() +
             " (`--check` compares without writing); every figure below is recomputed by that command from `../shared/data/public/` and the",
             "constants in `weights/roofline.json`. Predictions come from the C++ predictor (`perfcard eval`).", "",
             "APE = |predicted / measured - 1|. Kendall's tau ranks predictions against measurements within a",
             "group (1 = same order). Held-out rows were never used to fit: GEMM shapes are split 80/20 by",
             "shape hash; whole models by model family.", "",
             "| source | split | device | precision | rows | MAPE | median APE | Kendall tau |",
             "|---|---|---|---|---:|---:|---:|---:|"]
    for x in rows:
        lines.append(f"| {x['source']} | {x['split']} | {x['device_id']} | {x['precision']} | {x['rows']} | "
                     f"{x['mape']:.1%} | {x['median_ape']:.1%} | {x['kendall_tau']:.2f} |")
    lines += ["", "## Uncertainty shown with each prediction", "",
              "Each device family's relative uncertainty is its held-out MAPE (whole models where measured, ours first, else",
              "kernels):", "",
              "| family | MAPE | rows | from |", "|---|---:|---:|---|"]
    for fam, a in sorted(acc.items()):
        lines.append(f"| {fam} | {a['mape']:.1%} | {a['rows']} | {a['source']} |")
    missing = sorted(set(doc["families"]) - set(acc))
    lines += ["", "Families without held-out measurements (no uncertainty figure; predictions say so): "
              + (", ".join(missing) if missing else "none") + ".", ""]
    # A runtime's own measured error (its stage writes it; this report keeps it) replaces the family's on the
    # families its rows ran on.
    for rt, a in sorted(doc.get("runtime_accuracy", {}).items()):
        lines += [f"Rows of the `{rt}` runtime show its own held-out error instead, {a['mape']:.1%} over {a['rows']} "
                  f"rows ({a['source']}), on the families its rows ran on ({', '.join(a['families'])}); on other "
                  "families the larger of that and the family's figure above.", ""]
    lines += [
              "## What is not evaluated yet, and why", "",
              "- NVIDIA DeepLearningExamples: only the eager PyTorch ResNet-50 v1.5 sweeps match a zoo graph so",
              "  far (ResNeXt-101 32x4d and SE-ResNeXt are not torchvision architectures; TensorRT, ONNX Runtime",
              "  and TorchScript rows are other runtimes).",
              "- ML.ENERGY: multi-GPU (tensor/expert parallel), MoE, hybrid-Mamba and multimodal rows, and the",
              "  legacy v1 table (HF runtime, no batch size or power); see the energy section.",
              "- MLPerf: only as never-fitted rows (section below): TensorRT is not a runtime PerfCard models yet.",
              "- CPUs: only the build VM is measured with onnxruntime; other catalog CPUs use its constants.",
              "- The browser family (\"this device\"): fitted and scored on the machines whose onnxruntime-web rows",
              "  have a probe (`data/measured/machine_probe.json`): two so far; its uncertainty (stage W) leaves each",
              "  machine out in turn, but a visitor's machine can differ from both more than they differ from each other.",
              "- GPUs of our own: an H200 and an H100 with PyTorch 2.11 eager, fp16, batches 1 and 16, and on the H200",
              "  batch sweeps (2-256) and torch.compile rows (section \"Our GPU measurements\"; their eager inference",
              "  rows are in the table above and set hopper's uncertainty; the reduce-overhead rows fit the",
              "  `pytorch-cuda-graphs` runtime, section \"CUDA graphs\"); no other GPU or precision yet.", "",
              ""] + host_lines + l2_section(prov) + cpu_lines + mlperf_lines + energy_lines + [
              "## Calibration provenance", "", "```json", json.dumps(prov, indent=1, sort_keys=True), "```", "",
              "Power model (`weights/roofline.json` \"power\"):", "", "```json",
              json.dumps(doc["power"], indent=1, sort_keys=True), "```", ""]
    print("\n".join(lines[:12 + len(rows)]))
    print("\n".join(energy_lines))
    if args.check:
        with open(CONSTANTS) as f:
            shipped = json.load(f)
        with open(DOC) as f:
            text = f.read()
        diffs = differences(shipped, doc, roofline_part(text), lines)
        for d in diffs:
            print(f"differs: {d}")
        print(f"{len(diffs)} difference(s) from the committed uncertainty and {os.path.relpath(DOC, paths.ROOT)}"
              if diffs else "the committed uncertainty and the roofline report reproduce")
        return 1 if diffs else 0
    if not args.write:
        print("nothing written (--write stores the uncertainty and the report; --check compares them)")
        return 0
    write_constants(doc, CONSTANTS)
    os.makedirs(os.path.dirname(DOC), exist_ok=True)
    tail = generated_sections(DOC)
    with open(DOC, "w") as f:
        f.write("\n".join(lines) + ("\n" + tail if tail else ""))
    print(f"wrote {DOC} and {os.path.relpath(CONSTANTS, paths.ROOT)}")
    return 0


def roofline_part(text: str) -> list:
    """docs/accuracy.md's lines this script writes: those above what other scripts generated."""
    tail = generated_sections_of(text)
    return (text[:len(text) - len(tail)] if tail else text).rstrip("\n").split("\n")


def differences(shipped: dict, computed: dict, doc_lines: list, new_lines: list) -> list:
    """What --check reports: each family's uncertainty (MAPE to 0.01 points, rows exactly), the host-bound
    entries, and the report's lines (the "Written by ... on DATE" line aside)."""
    out = []
    for key in ("accuracy", "host_bound_accuracy"):
        a, b = shipped.get(key, {}), computed.get(key, {})
        for name in sorted(set(a) | set(b)):
            x, y = a.get(name), b.get(name)
            if x is None or y is None:
                out.append(f"{key}.{name}: {'missing from the committed file' if x is None else 'not computed'}")
                continue
            for field in sorted(set(x) | set(y)):
                u, v = x.get(field), y.get(field)
                same = (round(u, 4) == round(v, 4)) if isinstance(u, float) and isinstance(v, float) else u == v
                if not same:
                    out.append(f"{key}.{name}.{field}: committed {u!r}, computed {v!r}")
    def dated(ls):  # the date line aside, and the blank lines the document ends its part with
        # main() holds some blocks (the provenance's JSON) as one element of many lines: one line each here
        ls = [("Written by <date>" if l.startswith("Written by ") else l) for e in ls for l in e.split("\n")]
        while ls and not ls[-1].strip():
            ls.pop()
        return ls
    old, new = dated(doc_lines), dated(new_lines)
    shown = 0
    for k in range(max(len(old), len(new))):
        u = old[k] if k < len(old) else "<none>"
        v = new[k] if k < len(new) else "<none>"
        if u != v:
            shown += 1
            if shown <= 12:
                out.append(f"docs line {k + 1}: committed {u!r}, computed {v!r}")
    if shown > 12:
        out.append(f"... and {shown - 12} more docs lines")
    return out


if __name__ == "__main__":
    raise SystemExit(main())
