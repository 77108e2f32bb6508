"""Training tables for the learned predictors, from the zoo's analyze output and the measurements.

    /usr/bin/python3 -m scripts.data.build_tables [--out build/tables] [--cache DIR] [--skip-ops] [--skip-help]

Writes (docs/data.md, "Training tables", describes every column):
  whole_model.csv.gz   one row per measurement joined to a zoo graph: model + device features, labels, split
  per_op.csv.gz        NeuSight GEMM + Vidur op times keyed like the core's nodes (scripts/data/op_table.py)
  graphs_{train,val,test}.npz   node features, edges, static features and the labels, per split
  vocab.json           op type / class / device / precision / runtime / source vocabularies, feature lists,
                       schema_hash (predictors refuse data whose hash differs from the one they were built for)
  match_report.json    per source and device: rows matched, and the reasons the others were not
`perfcard analyze --per-node` runs once per distinct (structure_hash, bind); results are cached on disk by
(file sha256, bind) under --cache (default <out>/analyze_cache), so a re-run only reads.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pandas as pd

from scripts import paths
from scripts.data import catalog_features, devices, op_table, sources
from scripts.data.graph_features import (NODE_FEATURES, TOTALS, AnalyzeCache, op_classes, op_vocab,
                                         schema_hash)
from scripts.data.zoo_index import LEGACY, ZooIndex
from scripts.measure import machines
from scripts.zoo import manifest as zm, nasbench201

MEASURED = Path(paths.MEASURED)

# The core models these precisions (perfcard predict --precision); amp/amp_bf16 are autocast at fp16/bf16.
MODELLED_PRECISIONS = {"fp32", "tf32", "fp16", "bf16", "fp8", "int8", "amp", "amp_bf16"}
MIX_CLASSES = ["conv", "matmul", "elementwise", "normalization", "pooling", "softmax", "reduction",
               "data_movement"]
MODEL_FEATURES = [f"m_{k}" for k in TOTALS] + [f"mix_flops_{c}" for c in MIX_CLASSES] + \
    [f"mix_nodes_{c}" for c in MIX_CLASSES]
LABELS = ["latency_ms", "throughput_per_s", "memory_mib", "power_w", "energy_j"]
ROW_KEYS = ["graph_id", "generator", "family", "split_group", "split", "structure_hash", "feat_bind", "source",
            "device_id", "device_raw", "device_kind", "in_catalog", "precision", "runtime", "mode", "batch",
            "sequence", "img_size", "threads", "n_devices", "latency_kind", "throughput_unit", "energy_unit"]
WHOLE_COLUMNS = ROW_KEYS + LABELS + MODEL_FEATURES + catalog_features.DEVICE_FEATURES
# DLE model names whose network is a zoo architecture, as a timm name the zoo index knows. NVIDIA's
# ResNet-50 v1.5 is torchvision's resnet50 (stride in the 3x3 conv); DLE EfficientNet-B0/B4 follow the paper
# as torchvision does. The 'widese' variants and (SE-)ResNeXt101-32x4d have no torchvision graph.
DLE_TO_TIMM = {"resnet50v1.5": "resnet50", "RN50v1.5": "resnet50", "ConvNets/resnet50": "resnet50",
               "efficientnet:efficientnet-b0": "efficientnet_b0", "efficientnet:efficientnet-b4": "efficientnet_b4"}
DLE_TO_HF = {"BERT:base": "bert-base-uncased", "BERT:large": "bert-large-uncased"}
HELP_SIMULATED = {"eyeriss", "fpga"}


def split_group(entry: dict) -> str:
    """Rows are split by family so no architecture family is in two splits. NAS-Bench-201 is one 'family' of
    15,625 different cells: split by family it would put the whole HELP source in one split, so each cell (its
    structure_hash) is its own group; all rows of one graph still share a split."""
    if entry.get("generator") == "nasbench201" or entry.get("family") == "nasbench201":
        return "nasbench201:" + entry["structure_hash"]
    return str(entry.get("family"))


class Tables:
    def __init__(self, out: str, cache_dir: str, zoo: ZooIndex | None = None):
        self.out = out
        self.zoo = zoo or ZooIndex()
        self.cache = AnalyzeCache(cache_dir, zm.perfcard_binary())
        self.rows: list[dict] = []
        self.report: dict = defaultdict(lambda: {"matched": Counter(), "unmatched": Counter()})
        self.instances: dict[tuple, dict] = {}   # (generator, id, bind json) -> analysis
        self.by_hash: dict[tuple, dict] = {}     # (structure_hash, bind json) -> analysis
        self.failed: dict[tuple, str] = {}

    # -- analysis -----------------------------------------------------------------------------------------
    def analysis(self, e: dict, bind: dict) -> dict | None:
        bj = json.dumps(bind, sort_keys=True)
        key = (e["generator"], e["id"], bj)
        if key in self.instances:
            return self.instances[key]
        hk = (e.get("structure_hash"), bj)
        a = self.by_hash.get(hk) if e.get("structure_hash") else None
        if a is None:
            try:
                a = self.cache.get(os.path.join(zm.OUT_DIR, e["file"]), bind)
            except (RuntimeError, FileNotFoundError) as err:
                self.failed[key] = str(err)[:200]
                a = None
            if a is not None and e.get("structure_hash"):
                self.by_hash[hk] = a
        self.instances[key] = a
        return a

    def add(self, e: dict, bind: dict, src: str, dev_key: str, row: dict) -> bool:
        a = self.analysis(e, bind)
        if a is None:
            self.report[src]["unmatched"][(dev_key, "analyze failed on the zoo graph")] += 1
            return False
        grp = split_group(e)
        dev = row.get("device_id")
        feats = {f"m_{k}": a["totals"].get(k) for k in TOTALS}
        tot = sum(a["mix_flops"].values()) or 1.0
        feats.update({f"mix_flops_{c}": a["mix_flops"].get(c, 0.0) / tot for c in MIX_CLASSES})
        feats.update({f"mix_nodes_{c}": a["mix_nodes"].get(c, 0) for c in MIX_CLASSES})
        dfeat = catalog_features.features(dev if catalog_features.in_catalog(dev) else None, row.get("precision"))
        r = {"graph_id": e["id"], "generator": e["generator"], "family": e.get("family"), "split_group": grp,
             "split": op_table.hash_split(grp), "structure_hash": e.get("structure_hash"),
             "feat_bind": json.dumps(bind, sort_keys=True), "source": src,
             "in_catalog": catalog_features.in_catalog(dev)}
        r.update(row)
        r.update(feats)
        r.update({k: dfeat[k] for k in catalog_features.DEVICE_FEATURES})
        self.rows.append(r)
        self.report[src]["matched"][dev_key] += 1
        return True

    @staticmethod
    def _bind(e: dict, sequence=None, past_sequence=None) -> dict:
        b = dict(e.get("bind") or {})
        syms = {d for dims in (e.get("inputs") or {}).values() for d in dims if isinstance(d, str)}
        for s in syms:
            b.setdefault(s, 1)
        b["batch"] = 1 if "batch" in syms or "batch" in b else b.get("batch")
        for name, v in (("sequence", sequence), ("past_sequence", past_sequence)):
            if v is not None and v == v and name in syms and int(v) > 0:
                b[name] = int(v)
        return {k: v for k, v in b.items() if v is not None}

    # -- sources ------------------------------------------------------------------------------------------
    @staticmethod
    def _dev(r) -> tuple[dict, str]:
        dev = catalog_features.canonical(r.device_id)
        key = dev or f"raw:{r.device_raw}"
        return {"device_id": dev, "device_raw": str(r.device_raw), "device_kind": r.device_kind}, key

    @staticmethod
    def _labels(r) -> dict:
        def num(x):
            return float(x) if x is not None and x == x else None
        return {"latency_ms": num(r.latency_ms), "throughput_per_s": num(r.throughput_per_s),
                "power_w": num(getattr(r, "power_w", None)), "energy_j": num(getattr(r, "energy_j", None)),
                "memory_mib": None, "latency_kind": r.latency_kind, "throughput_unit": r.throughput_unit,
                "energy_unit": getattr(r, "energy_unit", None), "runtime": r.runtime, "mode": r.mode,
                "precision": r.precision if isinstance(r.precision, str) else None,
                "batch": num(r.batch), "sequence": num(r.seq_len), "img_size": num(r.img_size), "threads": None,
                "n_devices": num(r.n_devices)}

    def _precision_ok(self, src, key, prec) -> bool:
        if isinstance(prec, str) and prec not in MODELLED_PRECISIONS:
            self.report[src]["unmatched"][(key, f"precision {prec} not modelled")] += 1
            return False
        return True

    def timm(self):
        src = "timm_benchmarks_long"
        for r in sources.load(src).itertuples(index=False):
            dev, key = self._dev(r)
            if not self._precision_ok(src, key, r.precision):
                continue
            e, why = self.zoo.timm_graph(r.model, r.img_size)
            if e is None:
                self.report[src]["unmatched"][(key, why)] += 1
                continue
            self.add(e, self._bind(e), src, key, dict(self._labels(r), **dev))

    def dle(self):
        src = "nvidia_dle_readme_perf_tables"
        for r in sources.load(src).itertuples(index=False):
            dev, key = self._dev(r)
            if r.model in DLE_TO_TIMM:
                e, why = self.zoo.timm_graph(DLE_TO_TIMM[r.model], r.img_size if r.img_size == r.img_size else 224)
            elif r.model in DLE_TO_HF:
                e, why = self.zoo.llm_graph(DLE_TO_HF[r.model], "encode")
            else:
                e, why = None, "no zoo graph for the model name"
            if e is None:
                self.report[src]["unmatched"][(key, why)] += 1
                continue
            if not self._precision_ok(src, key, r.precision):
                continue
            self.add(e, self._bind(e, r.seq_len), src, key, dict(self._labels(r), **dev))

    def help(self):
        src = "help_latency_long"
        h = sources.load_help_latency_long(search_spaces=["nasbench201"])
        cols = ["help_arch_str", "device_raw", "device_id", "device_kind", "batch", "latency_ms"]
        h = h[cols].copy()
        h["device_raw"] = h.device_raw.astype(str)
        for (raw, dev_id, kind), g in h.groupby(["device_raw", "device_id", "device_kind"], dropna=False,
                                                 observed=True):
            dev_id = catalog_features.canonical(dev_id)
            key = dev_id or f"raw:{raw}"
            if raw in HELP_SIMULATED:
                self.report[src]["unmatched"][(key, "simulated/estimated hardware, not a measurement")] += len(g)
                continue
            for r in g.itertuples(index=False):
                e = self.zoo.nb201.get(r.help_arch_str)
                if e is None:
                    self.report[src]["unmatched"][(key, "no zoo graph for the NB201 arch string")] += 1
                    continue
                b = float(r.batch) if r.batch == r.batch else None
                self.add(e, self._bind(e), src, key, {
                    "device_id": dev_id, "device_raw": raw, "device_kind": kind if isinstance(kind, str) else None,
                    "latency_ms": float(r.latency_ms), "latency_kind": "per_batch_step", "runtime": "unspecified",
                    "mode": "inference", "precision": None, "batch": b})

    def mlenergy(self):
        for src in ("mlenergy_v1_legacy_llm", "mlenergy_v2_llm_diffusion", "mlenergy_v3_llm"):
            for r in sources.load(src).itertuples(index=False):
                dev, key = self._dev(r)
                if r.latency_kind not in ("per_output_token", "per_request"):
                    self.report[src]["unmatched"][(key, "diffusion model (no zoo graph family)")] += 1
                    continue
                e, why = self.zoo.llm_graph(r.model, "decode", by="mlenergy")
                if e is None:
                    self.report[src]["unmatched"][(key, why)] += 1
                    continue
                if not self._precision_ok(src, key, r.precision):
                    continue
                self.add(e, self._bind(e), src, key, dict(self._labels(r), **dev))

    def cpu_ours(self):
        """Our measurements of the build machines (data/measured/machines.json): onnxruntime-node (1-2
        threads) and onnxruntime-web's wasm backend (1 thread, in node and in headless Chromium: the
        browser's "this device")."""
        self._ours("perfcard_cpu_ort_node", "cpu_ort_node.csv", lambda r: "onnxruntime-node")
        self._ours("perfcard_web_ort_wasm", "web_ort_wasm.csv", lambda r: f"onnxruntime-web-wasm ({r.env})")

    def _ours(self, src: str, csv_name: str, runtime_of) -> None:
        path = MEASURED / csv_name
        if not path.exists():
            return
        m = pd.read_csv(path)
        for r in m.itertuples(index=False):
            # Each row's machine is its own (the build VM changed between sessions); one without a
            # catalog entry is counted under its raw id.
            dev_id = catalog_features.canonical(machines.catalog_id(r.machine_id))
            key = dev_id or f"raw:{r.machine_id}"
            if int(r.drift) == 1:
                self.report[src]["unmatched"][(key, "taken during drift (drift=1)")] += 1
                continue
            # Classic exports are named by file stem, the generated sets as "<generator>/<id>".
            gen, _, gid = nasbench201.as_measured(r.model, r.timestamp).rpartition("/")
            e = self.zoo.by_id.get((gen, gid)) if gen else self.zoo.legacy_by_id.get(r.model)
            if e is None or not os.path.exists(os.path.join(zm.OUT_DIR, e["file"])):
                self.report[src]["unmatched"][(key, "measured file not in scripts/zoo/out")] += 1
                continue
            seq = int(r.sequence) if int(r.sequence) > 0 else None
            past = int(r.past_sequence) or None
            rss = float(r.peak_rss_mib) if r.peak_rss_mib == r.peak_rss_mib else None  # none in Chromium
            self.add(e, self._bind(e, seq, past), src, key, {
                "device_id": dev_id, "device_raw": r.machine_id, "device_kind": devices.kind_of(dev_id),
                "latency_ms": float(r.median_ms), "latency_kind": "per_batch_step",
                "throughput_per_s": float(r.batch) / float(r.median_ms) * 1000.0, "throughput_unit": "samples/s",
                "memory_mib": rss, "runtime": runtime_of(r), "mode": "inference",
                "precision": "fp32", "batch": float(r.batch), "sequence": seq, "threads": int(r.threads)})

    def gpu_ours(self):
        """Our GPU campaign's rows (data/measured/gpu_<device>_torch.csv, scripts/measure/gpu_campaign.py):
        PyTorch eager on a lent GPU, every protocol; memory is the device's figure (NVML used), as the core's
        peak_memory_mb is; energy is per sample. Training at 16 bits ran under autocast: precision amp."""
        import glob
        from scripts.calibration.evaluate_gpu_ours import catalog_id
        from scripts.measure.gpu_campaign import read_rows
        src = "perfcard_gpu_torch"
        for path in sorted(glob.glob(str(MEASURED / "gpu_*_torch.csv"))):
            with open(path.replace("_torch.csv", "_environment.json")) as f:
                env = json.load(f)
            dev_id = catalog_id(env)
            key = dev_id or f"raw:{env.get('gpu')}"
            for r in pd.DataFrame(read_rows(path)).itertuples(index=False):
                if r.error:
                    self.report[src]["unmatched"][(key, "campaign: " + r.error.split(":")[0][:60])] += 1
                    continue
                if r.runtime != "eager":  # torch.compile: measured, but no runtime the core predicts
                    self.report[src]["unmatched"][(key, f"runtime torch.{r.runtime} not modelled")] += 1
                    continue
                ran = nasbench201.as_measured(r.model, r.timestamp)
                e = self.zoo.by_id.get((nasbench201.generator("dropped") if ran != r.model else r.set, ran))
                if e is None or not os.path.exists(os.path.join(zm.OUT_DIR, e["file"])):
                    self.report[src]["unmatched"][(key, "measured model not in scripts/zoo/out")] += 1
                    continue
                seq, past, batch = int(r.sequence) or None, int(r.past_sequence) or None, int(r.batch)
                prec = r.precision
                if r.protocol == "training" and prec in ("fp16", "bf16"):
                    prec = "amp" if prec == "fp16" else "amp_bf16"
                num = lambda x: float(x) if x != "" else None  # noqa: E731
                self.add(e, self._bind(e, seq, past), src, key, {
                    "device_id": dev_id, "device_raw": env.get("gpu"), "device_kind": devices.kind_of(dev_id),
                    "latency_ms": float(r.median_ms), "latency_kind": "per_batch_step",
                    "throughput_per_s": batch / float(r.median_ms) * 1000.0, "throughput_unit": "samples/s",
                    "memory_mib": num(r.device_used_mib), "power_w": num(r.power_w),
                    "energy_j": num(r.energy_j_per_sample), "energy_unit": "J/sample",
                    "runtime": "pytorch-eager", "mode": r.protocol, "precision": prec, "batch": float(batch),
                    "sequence": seq, "n_devices": 1})

    # -- outputs ------------------------------------------------------------------------------------------
    def whole_model(self) -> pd.DataFrame:
        df = pd.DataFrame(self.rows)
        for c in WHOLE_COLUMNS:
            if c not in df.columns:
                df[c] = None
        return df[WHOLE_COLUMNS + [c for c in df.columns if c not in WHOLE_COLUMNS]]


def vocabularies(whole: pd.DataFrame) -> dict:
    def vals(col):
        return sorted({str(x) for x in whole[col].dropna().unique()}) if len(whole) else []
    devs = sorted({str(d) if isinstance(d, str) else f"raw:{r}" for d, r in zip(whole.device_id, whole.device_raw)}) \
        if len(whole) else []
    return {"op_type": op_vocab(), "op_class": op_classes(), "device": devs, "precision": vals("precision"),
            "runtime": vals("runtime"), "source": vals("source")}


def schema_parts(vocab: dict) -> dict:
    """What a predictor's input layout depends on; vocabularies of devices/sources are data, not schema."""
    return {"node_features": NODE_FEATURES, "static_features": MODEL_FEATURES,
            "device_features": catalog_features.DEVICE_FEATURES, "labels": LABELS,
            "op_type": vocab["op_type"], "op_class": vocab["op_class"]}


LABEL_NUMERIC = ["batch", "sequence", "threads"] + LABELS + catalog_features.DEVICE_FEATURES
LABEL_CATEGORICAL = ["device", "precision", "runtime", "source"]


def write_graphs(t: Tables, whole: pd.DataFrame, vocab: dict, out: str) -> dict:
    counts = {}
    dev_ix = {d: i for i, d in enumerate(vocab["device"])}
    cat_ix = {c: {v: i for i, v in enumerate(vocab[c])} for c in ("precision", "runtime", "source")}
    for split in ("train", "val", "test"):
        w = whole[whole.split == split]
        keys = list(dict.fromkeys(zip(w.generator, w.graph_id, w.feat_bind)))
        gi = {k: i for i, k in enumerate(keys)}
        node_op, node_cls, node_feat, edges, node_ptr, edge_ptr, static, ids = [], [], [], [], [0], [0], [], []
        for (gen, gid, bj) in keys:
            a = t.instances[(gen, gid, bj)]
            node_op += a["op"]
            node_cls += a["cls"]
            node_feat += a["feat"]
            edges += a["edges"]
            node_ptr.append(len(node_op))
            edge_ptr.append(len(edges))
            tot = sum(a["mix_flops"].values()) or 1.0
            static.append([float(a["totals"].get(k) or 0.0) for k in TOTALS] +
                          [a["mix_flops"].get(c, 0.0) / tot for c in MIX_CLASSES] +
                          [float(a["mix_nodes"].get(c, 0)) for c in MIX_CLASSES])
            ids.append(f"{gen}/{gid}@{bj}")
        lab_num = w[LABEL_NUMERIC].apply(pd.to_numeric, errors="coerce").to_numpy(dtype=np.float64) \
            if len(w) else np.zeros((0, len(LABEL_NUMERIC)))
        dev_keys = [d if isinstance(d, str) else f"raw:{r}" for d, r in zip(w.device_id, w.device_raw)]
        lab_cat = np.array([[dev_ix[d] for d in dev_keys]] +
                           [[cat_ix[c].get(str(v), -1) if v is not None and v == v else -1 for v in w[c]]
                            for c in ("precision", "runtime", "source")], dtype=np.int32).T.reshape(len(w), 4)
        np.savez_compressed(
            os.path.join(out, f"graphs_{split}.npz"),
            graph_id=np.array(ids), node_ptr=np.array(node_ptr, dtype=np.int64),
            node_op=np.array(node_op, dtype=np.int32), node_class=np.array(node_cls, dtype=np.int16),
            node_feat=np.array(node_feat, dtype=np.float32).reshape(-1, len(NODE_FEATURES)),
            edge_ptr=np.array(edge_ptr, dtype=np.int64),
            edge_index=np.array(edges, dtype=np.int32).reshape(-1, 2).T,
            static=np.array(static, dtype=np.float64).reshape(-1, len(MODEL_FEATURES)),
            label_graph=np.array([gi[k] for k in zip(w.generator, w.graph_id, w.feat_bind)], dtype=np.int64),
            label_numeric=lab_num, label_categorical=lab_cat,
            schema_hash=np.array(schema_hash(schema_parts(vocab))))
        counts[split] = {"graphs": len(keys), "nodes": len(node_op), "edges": len(edges), "labels": len(w)}
    return counts


def _dev_label(dev) -> str:
    """Rows of devices outside the catalog are kept with null device features; the report says which."""
    return str(dev) if catalog_features.in_catalog(dev) else f"{dev} (not in catalog)"


def print_report(report: dict) -> None:
    for src in sorted(report):
        rep = report[src]
        m, u = rep["matched"], rep["unmatched"]
        print(f"\n{src}: {sum(m.values())} rows matched, {sum(u.values())} not")
        for dev in sorted(set(m) | {k[0] for k in u}, key=str):
            reasons = {k[1]: n for k, n in u.items() if k[0] == dev}
            why = "; ".join(f"{n} {r}" for r, n in sorted(reasons.items(), key=lambda x: -x[1]))
            print(f"  {_dev_label(dev):44s} matched {m.get(dev, 0):7d}" + (f"   not: {why}" if why else ""))


TABLES_BEGIN = "<!-- tables:begin (generated by: /usr/bin/python3 -m scripts.data.build_tables --update-doc docs/data.md) -->"
TABLES_END = "<!-- tables:end -->"


def render_markdown(report: dict, whole: pd.DataFrame, n_ops: int | None, counts: dict, zoo: ZooIndex) -> str:
    """The run's figures for docs/data.md: rows matched per source and device, and why the others were not."""
    gens = Counter(e["generator"] for e in zoo.all)
    lines = ["Zoo at this run: " + ", ".join(f"{g} {n}" for g, n in sorted(gens.items())) + " graphs. "
             f"whole_model: {len(whole)} rows"
             + (f" ({', '.join(f'{k} {v}' for k, v in whole.split.value_counts().sort_index().items())})"
                if len(whole) else "")
             + (f"; per_op: {n_ops} rows" if n_ops is not None else "") + ".", "",
             "| split | graphs | nodes | edges | label rows |", "|---|---:|---:|---:|---:|"]
    for sp in ("train", "val", "test"):
        c = counts.get(sp, {})
        lines.append(f"| {sp} | {c.get('graphs', 0)} | {c.get('nodes', 0)} | {c.get('edges', 0)} | {c.get('labels', 0)} |")
    lines += ["", "| source | device | matched | not matched: why |", "|---|---|---:|---|"]
    for src in sorted(report):
        m, u = report[src]["matched"], report[src]["unmatched"]
        devs = sorted(set(m) | {k[0] for k in u}, key=str)
        lines.append(f"| **{src}** | all | **{sum(m.values())}** | {sum(u.values())} |")
        for dev in devs:
            reasons = {k[1]: n for k, n in u.items() if k[0] == dev}
            why = "; ".join(f"{n} {r}" for r, n in sorted(reasons.items(), key=lambda x: -x[1]))
            lines.append(f"| | {_dev_label(dev).replace('|', '/')} | {m.get(dev, 0)} | {why} |")
    return "\n".join(lines)


def update_doc(path: str, block: str) -> None:
    text = Path(path).read_text()
    if TABLES_BEGIN not in text or TABLES_END not in text:
        raise SystemExit(f"{path}: markers not found ({TABLES_BEGIN} ... {TABLES_END})")
    head, rest = text.split(TABLES_BEGIN, 1)
    _, tail = rest.split(TABLES_END, 1)
    Path(path).write_text(head + TABLES_BEGIN + "\n\n" + block.rstrip() + "\n\n" + TABLES_END + tail)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(paths.BUILD, "tables"))
    ap.add_argument("--cache", default=None, help="analyze cache folder (default <out>/analyze_cache)")
    ap.add_argument("--skip-ops", action="store_true", help="leave out the per-op table")
    ap.add_argument("--skip-help", action="store_true", help="leave out HELP NAS-Bench-201 (421k rows)")
    ap.add_argument("--update-doc", metavar="MD", help="write this run's match figures into MD (docs/data.md)")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    t0 = time.time()
    t = Tables(args.out, args.cache or os.path.join(args.out, "analyze_cache"))
    print(f"zoo: {len(t.zoo.entries)} manifest graphs + {len(t.zoo.legacy)} {LEGACY} graphs")
    steps = [t.timm, t.dle, t.mlenergy, t.cpu_ours, t.gpu_ours] + ([] if args.skip_help else [t.help])
    for step in steps:
        s = time.time()
        step()
        print(f"{step.__name__}: {time.time() - s:.1f}s (analyze cache: {t.cache.hits} hits, {t.cache.misses} runs)")
    whole = t.whole_model()
    whole.to_csv(os.path.join(args.out, "whole_model.csv.gz"), index=False)
    vocab = vocabularies(whole)
    counts = write_graphs(t, whole, vocab, args.out)
    report = {s: {"matched": {str(k): v for k, v in r["matched"].items()},
                  "unmatched": {f"{k[0]} | {k[1]}": v for k, v in r["unmatched"].items()}} for s, r in t.report.items()}
    n_ops = None
    if not args.skip_ops:
        op_rep: dict = {}
        ops = op_table.build(op_rep)
        ops.to_csv(os.path.join(args.out, "per_op.csv.gz"), index=False)
        for s, r in op_rep.items():
            t.report[s]["matched"].update(r["matched"])
            t.report[s]["unmatched"].update(r["unmatched"])
            report[s] = {"matched": dict(r["matched"]), "unmatched": {f"{k[0]} | {k[1]}": v
                                                                         for k, v in r["unmatched"].items()}}
        n_ops = len(ops)
        print(f"per_op: {n_ops} rows")
    with open(os.path.join(args.out, "vocab.json"), "w") as f:
        json.dump(dict(vocab, schema=schema_parts(vocab), schema_hash=schema_hash(schema_parts(vocab)),
                       label_numeric=LABEL_NUMERIC, label_categorical=LABEL_CATEGORICAL), f, indent=1)
    with open(os.path.join(args.out, "match_report.json"), "w") as f:
        json.dump({"report": report, "graphs": counts, "analyze_failed": {"/".join(k[:2]) + "@" + k[2]: v
                                                                           for k, v in t.failed.items()}}, f, indent=1)
    print_report(t.report)
    print(f"\nwhole_model: {len(whole)} rows; splits {whole.split.value_counts().to_dict() if len(whole) else {}}")
    print(f"graphs: {counts}")
    print(f"analyze: {t.cache.misses} runs, {t.cache.hits} cache hits, {len(t.failed)} failed; {time.time() - t0:.0f}s")
    print(f"written to {args.out}")
    if args.update_doc:
        update_doc(args.update_doc, render_markdown(t.report, whole, n_ops, counts, t.zoo))
        print(f"updated {args.update_doc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
