"""CPU latency rows matched to zoo graphs, as `perfcard eval` queries.

Four sources:
  ours  data/measured/cpu_ort_node.csv (onnxruntime-node on the build machines; each row's machine_id
        names its catalog entry through scripts/measure/machines.py, and rows of a machine without one
        are left out). Only drift=0 rows (taken while the machine was quiet) are used; the thread count
        of each row goes into its query, so a 1-thread row is predicted on one core.
  web   data/measured/web_ort_wasm.csv (onnxruntime-web's wasm backend, one thread, in node and in headless
        Chromium): drift-free rows of machines whose probe was taken, each on its probe's device entry
        (scripts/measure/probe_web.py), for the page's "this device" row.
  probed  data/measured/cpu_ort_node.csv's rows of the other machines with a native probe, each on its
        cpu-probed entry (machines.probed_entries()), for `perfcard predict --device this-machine`.
  HELP  help_latency_long.csv.gz, NAS-Bench-201 cells on Xeons and a Raspberry Pi 4, measured with
        PyTorch on CPU (not onnxruntime), thread count not stated: predicted with every core.
"""
import gzip
import csv
import json
import os
import random

import pandas as pd

from scripts import paths
from scripts.measure import machines, probe_web
from scripts.roofline.whole_models import family_split
from scripts.zoo import manifest as zm, nasbench201
from scripts.zoo.ensure import ensure_models

MEASURED = paths.MEASURED
ZOO = paths.ZOO_OUT
HELP_CSV = paths.shared("help_latency_long.csv.gz")
NB201_MANIFEST = os.path.join(paths.ZOO_MANIFESTS, "nasbench201.jsonl")
HELP_CPUS = {"gold_6226": "cpu-intel-xeon-gold-6226", "gold_6240": "cpu-intel-xeon-gold-6240",
             "silver_4114": "cpu-intel-xeon-silver-4114", "silver_4210r": "cpu-intel-xeon-silver-4210r",
             "raspi4": "cpu-broadcom-bcm2711-raspberry-pi-4"}


def machine():
    """The catalogued machine our onnxruntime-node rows come from (stage E fits its catalog entry); one
    while the catalog describes one build machine."""
    df = pd.read_csv(os.path.join(MEASURED, "cpu_ort_node.csv"), usecols=["machine_id"])
    ids = sorted(i for i in df.machine_id.unique() if machines.catalog_id(i))
    if len(ids) != 1:
        raise SystemExit(f"expected onnxruntime-node rows of one catalogued machine, found {ids or 'none'} "
                         "(scripts/measure/machines.py CATALOG_IDS)")
    return machines.load()[ids[0]]


def require_graphs(models, csv_name):
    """Writes the zoo graphs the measured rows need that this clone lacks; stops naming any that cannot be
    written. A fit or a score on the rows that happen to have a graph would rewrite the shipped constants and
    figures from fewer rows than the committed ones, silently (issue 11)."""
    still = ensure_models(set(models))
    if still:
        raise SystemExit(f"{len(still)} models of {csv_name} have no zoo graph and their generators wrote none: "
                         f"{', '.join(still[:8])}{' ...' if len(still) > 8 else ''} (scripts.zoo.all writes the zoo)")


def with_graphs(df, csv_name):
    """Measured rows of one of our campaigns with their zoo graph (written first where this clone lacks it),
    their label (latency_ms: the median of the runs) and their split by model family."""
    ran = [nasbench201.as_measured(z, t) for z, t in zip(df.model, df.timestamp)]
    require_graphs(ran, csv_name)
    return df.assign(graph=[zm.graph_path(z) for z in ran], latency_ms=df.median_ms,
                     split=df.family.map(family_split))


def ort_rows():
    """Drift-free rows of our onnxruntime-node campaign on the catalogued machine, their zoo graphs written first."""
    m = machine()
    df = pd.read_csv(os.path.join(MEASURED, "cpu_ort_node.csv"))
    counts = {"all": int(len(df))}
    df = df[(df.drift == 0) & (df.machine_id == m["machine_id"])].copy()
    counts["drift_free_this_machine"] = int(len(df))
    df = with_graphs(df, "cpu_ort_node.csv")
    df["device_id"] = m["catalog_id"]
    # The zoo set a model comes from: the classic exports are named by file stem, the others "<set>/<id>".
    df["zoo_set"] = df.model.map(lambda z: z.split("/")[0] if "/" in z else "classic")
    return df.reset_index(drop=True), counts


def web_rows(entries=None):
    """Drift-free one-thread onnxruntime-web rows of the probed machines, their zoo graphs written first, each on
    its machine's and environment's probe entry (entries: probe_web.device_entries(), by default)."""
    entries = probe_web.device_entries() if entries is None else entries
    df = pd.read_csv(os.path.join(MEASURED, "web_ort_wasm.csv"))
    counts = {"all": int(len(df))}
    df = df[(df.drift == 0) & (df.threads == 1)].copy()
    counts["drift_free"] = int(len(df))
    df = df[[(m, e) in entries for m, e in zip(df.machine_id, df.env)]].copy()
    counts["with_probe"] = int(len(df))
    df = with_graphs(df, "web_ort_wasm.csv")
    df["device_id"] = [probe_web.device_id(m, e) for m, e in zip(df.machine_id, df.env)]
    return df.reset_index(drop=True), counts


def probed_rows(entries=None):
    """Drift-free onnxruntime-node rows of the machines with a native probe (not the catalogued build VM, whose
    rows stage E fits), their zoo graphs written first, each on its machine's cpu-probed entry
    (machines.probed_entries(), by default): what stage P fits."""
    entries = machines.probed_entries() if entries is None else entries
    df = pd.read_csv(os.path.join(MEASURED, "cpu_ort_node.csv"))
    counts = {"all": int(len(df))}
    fitted = machine()["machine_id"]
    df = df[(df.drift == 0) & df.machine_id.isin(set(entries) - {fitted})].copy()
    counts["drift_free_probed_machines"] = int(len(df))
    if df.empty:
        return df, counts
    df = with_graphs(df, "cpu_ort_node.csv")
    df["device_id"] = [entries[m]["id"] for m in df.machine_id]
    return df.reset_index(drop=True), counts


def ort_queries(df, runtime="onnxruntime"):
    """One `perfcard eval` query per row (graph, batch/sequence/past_sequence dims, device_id, threads);
    runtime: onnxruntime (our node rows) or onnxruntime-web (calibrate_browser.py's rows)."""
    qs = []
    for g, b, s, p, t, d in zip(df.graph, df.batch, df.sequence, df.past_sequence, df.threads, df.device_id):
        dims = {"batch": int(b)}
        if int(s) > 0:
            dims["sequence"] = int(s)
        if int(p) > 0:
            dims["past_sequence"] = int(p)
        qs.append({"model": g, "dims": dims, "device": d, "precision": "fp32", "runtime": runtime,
                   "threads": int(t)})
    return qs


def help_cells(sample, seed=0):
    """{arch index: graph path} of a seeded sample of the NB201 manifest's cells, their graphs written where
    this clone lacks them: the sample is the same on every clone, whichever graphs happen to be on disk."""
    entries = {}
    with open(NB201_MANIFEST) as f:
        for line in f:
            e = json.loads(line)
            entries[int(e["config"]["arch_index"])] = e
    cells = sorted(random.Random(seed).sample(sorted(entries), min(sample, len(entries))))
    require_graphs([entries[i]["file"][:-len(".onnx")] for i in cells], "HELP's NAS-Bench-201 sample")
    return {i: os.path.join(ZOO, entries[i]["file"]) for i in cells}


def help_rows(sample=2000, seed=0):
    """HELP's NB201 CPU latencies for a seeded sample of the manifest's cells (help_cells)."""
    files = help_cells(sample, seed)
    cells = set(files)
    rows = []
    with gzip.open(HELP_CSV, "rt", newline="") as f:
        for r in csv.DictReader(f):
            if r["search_space"] == "nasbench201" and r["device_batch"] in HELP_CPUS and int(r["arch_index"]) in cells:
                i = int(r["arch_index"])
                rows.append({"help_device": r["device_batch"], "device_id": HELP_CPUS[r["device_batch"]],
                             "arch_index": i, "graph": files[i], "latency_ms": float(r["latency_ms"])})
    return pd.DataFrame(rows)


def help_queries(df):
    return [{"model": g, "dims": {"batch": 1}, "device": d, "precision": "fp32", "runtime": "onnxruntime", "threads": 0}
            for g, d in zip(df.graph, df.device_id)]
