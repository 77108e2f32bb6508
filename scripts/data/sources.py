"""One loader per public source -> tidy pandas DataFrame with PerfCard's common columns.

Usage (repo root, Debian's /usr/bin/python3):

    from scripts.data import sources
    df = sources.load("timm_benchmarks_long")      # or sources.load_timm_benchmarks_long()
    df.attrs["report"]                             # {'rows_in': .., 'dropped': {reason: n}, 'notes': [...]}
    sources.SOURCES                                # name -> loader

The data folder is ``../shared/data/public`` relative to the repo root (override with the environment
variable PERFCARD_PUBLIC_DATA). It is read-only reference data: never copy it into the repo.

Common columns (``COMMON_COLUMNS``; NaN/None where a source does not say):

    source            loader name
    device_id         PerfCard id (scripts/data/devices.py) or None when the spelling does not name an exact part
    device_raw        the spelling as found in the source (after splitting off counts like '8x')
    device_family     chip family even when device_id is None (a100, v100, h100, cpu, ...)
    device_kind       gpu | cpu | soc | accelerator
    device_status     mapped | family_only | ambiguous | out_of_scope | unknown
    in_catalog        device_id is in PerfCard's device catalog (device_specs.csv)
    mig               MIG profile when the row ran on a MIG slice ('1x1g.10gb'); device_id is the parent GPU
    n_devices         accelerators used by the measurement (GPUs / TP group / system); 1 when single device
    runtime           pytorch-eager, pytorch-compile, pytorch, tensorrt, onnxruntime, onnxruntime-tensorrt,
                      tf-trt, tensorflow, tensorflow-xla, paddle, paddle-trt, mxnet, torchscript, ncnn,
                      ncnn-vulkan, llama.cpp, tensorrt-llm, vllm, diffusers, openvino, tflite, armnn, ...
    precision         fp32 | tf32 | fp16 | bf16 | amp (fp16 autocast / 'mixed precision') | amp_bf16 |
                      int8 | fp8 | fp4 | mxfp4 | int4 | None (not stated)
    mode              inference | training
    granularity       model | layer | op | kernel
    model             the source's model name
    batch             samples per step (per GPU for multi-GPU training tables)
    seq_len           sequence length / tokens (LLM input length, vidur num_tokens, llama.cpp pp/tg length)
    img_size          input resolution (square side)
    latency_ms        latency in ms; what it is per: latency_kind
    latency_kind      per_batch_step | per_request | per_query | per_output_token | per_prompt |
                      per_kernel_call | per_op_call | per_inference
    latency_derived   True when computed from throughput (batch / throughput) rather than measured
    throughput_per_s  throughput; unit in throughput_unit (samples/s, images/s, tokens/s, TFLOPS, ...)
    throughput_unit
    power_w           average power; what power in power_kind (gpu_avg | system_wall_avg_approx | gpu_avg_derived)
    power_kind
    energy_j          energy; per what in energy_unit (J/request, J/token, J/image, J/video)
    energy_unit

Source-specific columns keep the source's meaning under a prefix (timm_, dle_, neusight_, vidur_,
mlenergy_, mlperf_, lambda_, help_, ncnn_, llamacpp_, trtllm_, mamf_, ultra_).
"""
from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path
from typing import Callable, Iterable, Optional

import numpy as np
import pandas as pd

from scripts import paths

from . import devices

ENV_VAR = "PERFCARD_PUBLIC_DATA"

COMMON_COLUMNS = [
    "source", "device_id", "device_raw", "device_family", "device_kind", "device_status", "in_catalog", "mig",
    "n_devices", "runtime", "precision", "mode", "granularity", "model", "batch", "seq_len", "img_size",
    "latency_ms", "latency_kind", "latency_derived", "throughput_per_s", "throughput_unit",
    "power_w", "power_kind", "energy_j", "energy_unit",
]


class PublicDataMissing(FileNotFoundError):
    pass


def data_dir() -> Path:
    env = os.environ.get(ENV_VAR)
    return Path(env) if env else Path(paths.SHARED_DATA)


def missing_message(path: Optional[Path] = None) -> str:
    d = data_dir()
    what = f"file {path}" if path else f"folder {d}"
    return (f"PerfCard public data not found: {what} is absent.\n"
            f"The loaders read the read-only public measurements from ../shared/data/public relative to the "
            f"repo root ({paths.ROOT}), i.e. {paths.SHARED_DATA}.\n"
            f"Make that folder available (mount or check out the shared data next to the repo), or point "
            f"{ENV_VAR}=/path/to/public at a copy outside the repo. Do not copy the data into the repo.")


def data_available() -> bool:
    return data_dir().is_dir()


def _path(name: str) -> Path:
    p = data_dir() / name
    if not p.exists():
        raise PublicDataMissing(missing_message(p))
    return p


# ------------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------------
def _attach_devices(df: pd.DataFrame, raw_col: str = "device_raw", want=None, source: Optional[str] = None,
                    resolve_col: Optional[str] = None) -> pd.DataFrame:
    """Add the device_* columns from df[raw_col] (resolved on df[resolve_col] if given)."""
    key = resolve_col or raw_col
    wants = df["_want"] if "_want" in df.columns else pd.Series([want] * len(df), index=df.index)
    keys = list(zip(df[key].astype(object).where(df[key].notna(), None), wants))
    cache = {}
    for k in set(keys):
        cache[k] = devices.resolve(k[0], k[1], source)
    res = [cache[k] for k in keys]
    df["device_id"] = [r.device_id for r in res]
    df["device_family"] = [r.family for r in res]
    df["device_kind"] = [r.kind for r in res]
    df["device_status"] = [r.status for r in res]
    df["in_catalog"] = [r.in_catalog for r in res]
    df["mig"] = [r.mig for r in res]
    df["device_virtual"] = [r.virtual for r in res]
    df["device_note"] = [r.reason for r in res]
    if "_want" in df.columns:
        df.drop(columns=["_want"], inplace=True)
    return df


def _finish(df: pd.DataFrame, source: str, report: dict) -> pd.DataFrame:
    df = df.copy()
    df["source"] = source
    for c in COMMON_COLUMNS:
        if c not in df.columns:
            df[c] = np.nan
    if df["latency_derived"].isna().all():
        df["latency_derived"] = df["latency_ms"].notna() & False
    df["latency_derived"] = df["latency_derived"].fillna(False).astype(bool)
    df["in_catalog"] = df["in_catalog"].fillna(False).astype(bool)
    for c in ("batch", "seq_len", "img_size", "n_devices"):
        df[c] = pd.to_numeric(df[c], errors="coerce")
    for c in ("latency_ms", "throughput_per_s", "power_w", "energy_j"):
        df[c] = pd.to_numeric(df[c], errors="coerce").astype(float)
    extra = [c for c in df.columns if c not in COMMON_COLUMNS]
    df = df[COMMON_COLUMNS + extra].reset_index(drop=True)
    report.setdefault("dropped", {})
    report.setdefault("notes", [])
    report["rows_out"] = len(df)
    df.attrs["report"] = report
    return df


def _prefix(df: pd.DataFrame, cols: Iterable[str], prefix: str) -> pd.DataFrame:
    return df.rename(columns={c: f"{prefix}{c}" for c in cols})


def _drop(df: pd.DataFrame, mask, reason: str, report: dict) -> pd.DataFrame:
    mask = pd.Series(mask, index=df.index).fillna(False).astype(bool)
    n = int(mask.sum())
    if n:
        report.setdefault("dropped", {})
        report["dropped"][reason] = report["dropped"].get(reason, 0) + n
    return df[~mask]


_PREC_WORDS = [
    (r"\bmixed[ -]?precision\b|\bamp\b|\bmixed\b|\btf-amp\b", "amp"),
    (r"\btf32\b", "tf32"),
    (r"\bfp32\b|\bfloat32\b|\bsingle\b", "fp32"),
    (r"\bbf16\b|\bbfloat16\b", "bf16"),
    (r"\bfp16\b|\bfloat16\b|\bhalf\b", "fp16"),
    (r"\bint8\b", "int8"),
    (r"\bfp8\b", "fp8"),
    (r"\bfp4\b|\bnvfp4\b", "fp4"),
    (r"\bmxfp4\b", "mxfp4"),
]


def norm_precision(text) -> Optional[str]:
    if text is None or (isinstance(text, float) and np.isnan(text)):
        return None
    t = str(text).lower().replace("_", " ")
    if t in ("amp_bf16", "amp bf16"):
        return "amp_bf16"
    for pat, p in _PREC_WORDS:
        if re.search(pat, t):
            return p
    return None


def _precisions_in(text: str) -> list[str]:
    """All precisions named in a text, in order of appearance."""
    t = text.lower()
    found = []
    for pat, p in _PREC_WORDS:
        for m in re.finditer(pat, t):
            found.append((m.start(), p))
    found.sort()
    out = []
    for _, p in found:
        if p not in out:
            out.append(p)
    return out


# ------------------------------------------------------------------------------------------------
# timm
# ------------------------------------------------------------------------------------------------
def load_timm_benchmarks_long() -> pd.DataFrame:
    """huggingface/pytorch-image-models results/benchmark-*.csv, one row per (file, model, img_size)."""
    rep = {"dropped": {}, "notes": []}
    t = pd.read_csv(_path("timm_benchmarks_long.csv.gz"))
    rep["rows_in"] = len(t)
    t = _drop(t, t.samples_per_sec.isna() | t.step_time_ms.isna(), "no samples/s or step time", rep)
    out = pd.DataFrame({
        "device_raw": t.device,
        "runtime": np.where(t.compiled, "pytorch-compile", "pytorch-eager"),
        "precision": t.precision.map({"amp": "amp", "amp_bf16": "amp_bf16", "bf16": "bf16", "fp32": "fp32"}),
        "mode": t["mode"].map({"infer": "inference", "train": "training"}),
        "granularity": "model",
        "model": t.model,
        "batch": t.batch_size,
        "img_size": t.img_size,
        "latency_ms": t.step_time_ms,
        "latency_kind": "per_batch_step",
        "throughput_per_s": t.samples_per_sec,
        "throughput_unit": "samples/s",
        "n_devices": 1,
    })
    for c in ["source_file", "layout", "torch", "cuda", "compiled", "param_count_M", "gmacs", "macts_M"]:
        out[f"timm_{c}"] = t[c].values
    out = _attach_devices(out)
    rep["notes"].append("runtime pytorch-compile = '-dynamo' result files (torch.compile); CPU files are all dynamo.")
    rep["notes"].append("precision amp = fp16 autocast, amp_bf16 = bf16 autocast, bf16 = pure bf16 weights+activations.")
    return _finish(out, "timm_benchmarks_long", rep)


# ------------------------------------------------------------------------------------------------
# NVIDIA DeepLearningExamples README tables
# ------------------------------------------------------------------------------------------------
_NUM = re.compile(r"[-+]?\d[\d,]*\.?\d*(?:[eE][-+]?\d+)?|[-+]?\.\d+")


def _num(cell) -> Optional[float]:
    if cell is None:
        return None
    s = str(cell).replace("**", "").replace("`", "").strip()
    if not s or s.lower() in ("-", "n/a", "na", "oom", "x", "—", "–"):
        return None
    m = _NUM.search(s)
    if not m:
        return None
    tok = m.group(0)
    if "," in tok:
        parts = tok.split(",")
        if all(len(p) == 3 for p in parts[1:]) and parts[0]:  # thousands separators: 150,439
            tok = tok.replace(",", "")
        else:
            return None
    try:
        return float(tok)
    except ValueError:
        return None


def _lat_unit(header: str, cells: list) -> Optional[str]:
    h = header.lower()
    if re.search(r"\(\s*ms\s*\)|\[\s*ms\s*\]|\bms\b|msec|millisec", h):
        return "ms"
    if re.search(r"\(\s*(us|usec|μs|µs)\s*\)|\busec\b|\bμs\b|\bµs\b", h):
        return "us"
    if re.search(r"\(\s*s\s*\)|\[\s*s\s*\]|\bsec\)|\(sec", h):
        return "s"
    units = set()
    for c in cells:
        m = re.search(r"\d\s*(ms|us|μs|s)\b", str(c))
        if m:
            units.add(m.group(1))
    if len(units) == 1:
        return units.pop().replace("μs", "us")
    return None


def _thr_unit(header: str, cells: list) -> tuple[Optional[str], float]:
    text = header.lower() + " " + " ".join(str(c).lower() for c in cells[:3])
    if "mol/ms" in text:
        return "molecules/s", 1000.0
    for pat, unit in [(r"img|image", "images/s"), (r"\bseq|sequence|sent", "sequences/s"),
                      (r"\btok|token", "tokens/s"), (r"mels", "mels/s"), (r"frame", "frames/s"),
                      (r"inferences", "samples/s"), (r"sample|item|\bmol\b", "samples/s")]:
        if re.search(pat, text):
            return unit, 1.0
    return None, 1.0


_SAMPLE_UNITS = {"images/s", "sequences/s", "samples/s", "molecules/s"}


def _dle_model(readme: str) -> str:
    parts = readme.split("/")[1:-1]
    sub = "/triton/" in readme.lower() and not readme.lower().endswith("/triton/readme.md")
    parts = [p for p in parts if p.lower() not in ("triton", "tensorrt", "doc", "contrib", "deployment")]
    if not parts:
        return readme
    return "/".join(parts[-2:]) if sub and len(parts) >= 2 else parts[-1]


def _dle_runtime_base(readme: str) -> str:
    top = readme.split("/")[0]
    return {"PyTorch": "pytorch", "DGLPyTorch": "pytorch", "CUDA-Optimized": "pytorch",
            "TensorFlow": "tensorflow", "TensorFlow2": "tensorflow", "MxNet": "mxnet",
            "PaddlePaddle": "paddle"}.get(top, top.lower())


def _dle_ctx_runtime(readme: str, ctx: str) -> tuple[str, bool]:
    c = ctx.lower()
    base = _dle_runtime_base(readme)
    triton = "/triton/" in readme.lower() or "triton" in c or bool(re.search(r"\b(offline|online):", c))
    if "onnx runtime" in c or "onnxruntime" in c:
        return ("onnxruntime-tensorrt" if "tensorrt" in c else "onnxruntime"), triton
    if "tf-trt" in c or "tensorflow + tensorrt" in c:
        return "tf-trt", triton
    if "paddle-trt" in c:
        return "paddle-trt", triton
    if "merlin hps + tensorrt" in c:
        return "tensorrt", triton
    if "tensorrt" in c or "/tensorrt/" in readme.lower():
        return "tensorrt", triton
    if triton:
        if re.search(r"\bpytorch\b", c):
            return "torchscript", True  # Triton's PyTorch backend executes TorchScript
        if re.search(r"\btensorflow\b", c):
            return "tensorflow", True
    return base, triton


def _find_device_text(parts: list[str]) -> Optional[str]:
    for p in parts:
        if not p:
            continue
        r = devices.resolve(p, "gpu")
        if r.family is not None:
            return p
    return None


def _n_from_ctx(text: Optional[str]) -> Optional[int]:
    if not text:
        return None
    m = re.search(r"\((\d+)\s*x\s*[A-Za-z]", text)
    return int(m.group(1)) if m else None


def _dle_mode(parts: list[str]) -> Optional[str]:
    for p in parts:
        pl = (p or "").lower()
        if re.search(r"inference|offline|online|evaluation|evaluate|deploy|paddle-trt", pl):
            return "inference"
        if re.search(r"train|fine-?tuning|pre-?training", pl):
            return "training"
    return None


def load_nvidia_dle_readme_perf_tables() -> pd.DataFrame:
    """NVIDIA/DeepLearningExamples README performance tables (raw cells) -> one row per
    (table row, precision). Device and precision come from the headings, columns or cells; rows whose
    device, precision, batch or measurement cannot be read reliably are dropped with a reason."""
    rep = {"dropped": {}, "notes": []}
    d = pd.read_csv(_path("nvidia_dle_readme_perf_tables.csv.gz"))
    rep["rows_in"] = len(d)
    for c in ("section", "heading", "subheading"):
        d[c] = d[c].fillna("")
    drops = Counter()
    out_rows = []
    for (readme, tidx), g in d.groupby(["readme", "table_idx"], sort=False):
        header = [str(h) for h in json.loads(g.header_json.iloc[0])]
        hl = [h.lower() for h in header]
        sec, head, sub = g.section.iloc[0], g.heading.iloc[0], g.subheading.iloc[0]
        if sub.strip().startswith("|"):
            sub = ""  # a table line captured as a heading
        if head.strip().startswith("|"):
            head = ""
        parts = [sub, head, sec]
        ctx = " | ".join(p for p in parts if p)
        rows = [json.loads(r) for r in g.row_json]
        n = len(rows)

        def col(pred):
            return [i for i, h in enumerate(hl) if pred(h)]

        thr_cols = col(lambda h: bool(re.search(r"throughput|inferences ?/ ?s|img/s", h)) and not re.search(
            r"speed-?up|scaling|speedup", h))
        lat_cols = col(lambda h: bool(re.search(r"latency", h)) and bool(re.search(r"avg|average|mean", h))
                       and not re.search(r"speed-?up|std|tolerance", h))
        if not lat_cols:
            lat_cols = col(lambda h: bool(re.fullmatch(r"latency\s*(\((ms|s)\)|\[(ms|s)\])?", h.strip())))
        if not thr_cols and not lat_cols:
            if re.search(r"accuracy|loss|time to train|expected training time|wer|bleu|perplexity|ap ",
                         ctx.lower() + " " + " ".join(hl)):
                drops["accuracy / time-to-train table (no speed measurement)"] += n
            else:
                drops["no throughput or average-latency column"] += n
            continue
        dev_text = _find_device_text(parts)
        if dev_text is None:
            drops["no GPU named in the headings"] += n
            continue
        mode = _dle_mode(parts)
        if mode is None:
            drops["inference/training not stated in headings"] += n
            continue
        base_rt, triton = _dle_ctx_runtime(readme, ctx)
        batch_cols = col(lambda h: "batch" in h and not re.search(r"global|accumulat|concat|speed", h))
        gpus_cols = col(lambda h: bool(re.match(r"^(number of )?gpus?$", h.strip())))
        nodes_cols = col(lambda h: h.strip() == "nodes")
        gpn_cols = col(lambda h: h.strip() in ("gpus / node", "gpus per node"))
        prec_cols = col(lambda h: h.strip() == "precision")
        amp_cols = col(lambda h: h.strip() == "amp")
        fw_cols = col(lambda h: h.strip() == "framework")
        be_cols = col(lambda h: h.strip() == "backend accelerator")
        xla_cols = col(lambda h: h.strip() == "xla")
        seq_cols = col(lambda h: bool(re.search(r"sequence length|input length|^seq", h)))
        res_cols = col(lambda h: h.strip() == "resolution")
        model_cols = col(lambda h: h.strip() in ("model", "model size"))
        ds_cols = col(lambda h: h.strip() == "dataset")
        conc_cols = col(lambda h: h.strip() == "concurrency")
        infer_cols = col(lambda h: "server compute infer" in h)
        p99_cols = col(lambda h: bool(re.search(r"(p99|99%) ?latency|latency ?(-|\s)?99%", h)))
        if not batch_cols:
            drops["no batch-size column"] += n
            continue
        bcol = batch_cols[0]
        batch_order = _precisions_in(header[bcol])
        ctx_prec = None
        for p in parts:
            ps = _precisions_in(p)
            if len(ps) == 1:
                ctx_prec = ps[0]
                break
        # throughput/latency column precision (column-level) and pairing
        thr_prec = {i: (_precisions_in(header[i]) or [None])[0] for i in thr_cols}
        lat_prec = {i: (_precisions_in(header[i]) or [None])[0] for i in lat_cols}
        xla_hdr = any("xla" in h for h in hl)
        # measurement "slots": one per precision present at column level, else one slot
        col_precs = sorted({p for p in list(thr_prec.values()) + list(lat_prec.values()) if p},
                           key=lambda p: min([i for i, q in {**thr_prec, **lat_prec}.items() if q == p]))
        slots = col_precs if col_precs else [None]
        prev = [""] * len(header)
        for ri, r in enumerate(rows):
            r = [str(x) for x in r] + [""] * max(0, len(header) - len(r))
            # carry forward blank leading cells (merged-cell style tables)
            for ci in (model_cols + ds_cols):
                if not r[ci].strip():
                    r[ci] = prev[ci]
            prev = r
            for slot in slots:
                # precision for this row & slot
                prec = slot
                if prec is None and prec_cols:
                    prec = norm_precision(r[prec_cols[0]])
                if prec is None and amp_cols:
                    v = r[amp_cols[0]].strip().lower()
                    prec = "amp" if v in ("yes", "true", "on", "y", "amp") else None
                if prec is None:
                    prec = ctx_prec
                if prec is None:
                    drops["precision not stated for the row (headings/columns/cells)"] += 1
                    continue
                # batch (may be 'a/b' per precision)
                bcell = r[bcol].replace("**", "").strip()
                if re.fullmatch(r"\d{1,3}(,\d{3})+", bcell):  # thousands separators: 131,072
                    bcell = bcell.replace(",", "")
                bparts = [x for x in re.split(r"\s*[/,]\s*", bcell) if x]
                labelled = {norm_precision(x): _num(x) for x in bparts if re.search(r"[A-Za-z]", x)}
                if len(bparts) > 1 and len(labelled) == len(bparts) and None not in labelled:
                    # '128 (FP32) / 256 (AMP)': every part names its precision
                    if prec not in labelled:
                        drops["per-precision batch cell cannot be matched to the precision"] += 1
                        continue
                    batch = labelled[prec]
                elif len(bparts) > 1:
                    vals = [_num(x) for x in bparts]
                    if len(set(vals)) == 1:
                        batch = vals[0]
                    elif batch_order and prec in batch_order and len(batch_order) == len(vals):
                        batch = vals[batch_order.index(prec)]
                    elif batch_order and prec == "amp" and "fp16" in batch_order and len(batch_order) == len(vals):
                        batch = vals[batch_order.index("fp16")]
                    else:
                        drops["per-precision batch cell cannot be matched to the precision"] += 1
                        continue
                else:
                    batch = _num(bcell)
                if batch is None:
                    drops["batch cell not numeric"] += 1
                    continue
                # throughput
                tcs = [i for i in thr_cols if thr_prec[i] in (slot, None)] if slot else thr_cols
                thr, tunit = None, None
                if tcs:
                    ti = tcs[0]
                    thr = _num(r[ti])
                    tunit, scale = _thr_unit(header[ti], [r[ti]])
                    tunit = tunit or "unspecified"
                    if tunit == "samples/s" and re.search(r"speechsynthesis|fastspeech|tacotron|waveglow|hifigan",
                                                          readme.lower()):
                        tunit = "audio-samples/s"  # speech synthesis: generated waveform samples per second
                    if thr is not None:
                        thr *= scale
                lcs = [i for i in lat_cols if lat_prec[i] in (slot, None)] if slot else lat_cols
                lat, lunit = None, None
                if lcs:
                    li = lcs[0]
                    lat = _num(r[li])
                    lunit = _lat_unit(header[li], [x[li] for x in rows if li < len(x)])
                    if lat is not None and lunit is None:
                        lat = None
                        drops["(partial) latency cell discarded, unit not stated; row kept with throughput"] += 1
                    elif lat is not None:
                        lat = lat * {"ms": 1.0, "s": 1000.0, "us": 1e-3}[lunit]
                if thr is None and lat is None:
                    drops["empty / non-numeric measurement cells"] += 1
                    continue
                # devices
                n_dev = None
                if gpus_cols:
                    n_dev = _num(r[gpus_cols[0]])
                if nodes_cols and gpn_cols:
                    a, b = _num(r[nodes_cols[0]]), _num(r[gpn_cols[0]])
                    n_dev = a * b if a and b else n_dev
                if n_dev is None:
                    n_dev = _n_from_ctx(dev_text) or 1
                # runtime per row
                rt = base_rt
                if fw_cols:
                    fw = r[fw_cols[0]].lower()
                    if "trt" in fw or "tensorrt" in fw:
                        rt = "tensorrt"
                    elif fw.strip() in ("pyt", "pytorch"):
                        rt = "pytorch"
                if be_cols:
                    be = r[be_cols[0]].lower()
                    if "tensorrt" in be and rt.startswith("onnxruntime"):
                        rt = "onnxruntime-tensorrt"
                xla = xla_hdr and (not xla_cols or r[xla_cols[0]].strip().lower() in ("yes", "true", "on", "y", "xla"))
                if rt == "tensorflow" and xla:
                    rt = "tensorflow-xla"
                seq = _num(r[seq_cols[0]]) if seq_cols else None
                img = None
                if res_cols:
                    m = re.match(r"\s*(\d+)", r[res_cols[0]])
                    img = float(m.group(1)) if m else None
                model = _dle_model(readme)
                if model_cols and r[model_cols[0]].strip():
                    model = f"{model}:{r[model_cols[0]].strip()}"
                lat_derived = False
                if lat is None and thr and tunit in _SAMPLE_UNITS and not triton:
                    per_step = batch * (n_dev if mode == "training" else 1)
                    lat = per_step / thr * 1000.0
                    lat_derived = True
                out_rows.append({
                    "device_raw": dev_text, "n_devices": n_dev, "runtime": rt, "precision": prec, "mode": mode,
                    "granularity": "model", "model": model, "batch": batch, "seq_len": seq, "img_size": img,
                    "latency_ms": lat,
                    "latency_kind": ("per_batch_step" if (lat_derived or not triton) else "per_query"),
                    "latency_derived": lat_derived, "throughput_per_s": thr, "throughput_unit": tunit,
                    "dle_readme": readme, "dle_table_idx": tidx, "dle_row_idx": ri,
                    "dle_section": sec, "dle_heading": head, "dle_subheading": sub,
                    "dle_triton": triton, "dle_xla": bool(xla),
                    "dle_concurrency": _num(r[conc_cols[0]]) if conc_cols else None,
                    "dle_dataset": r[ds_cols[0]] if ds_cols else None,
                    "dle_server_compute_infer_ms": _num(r[infer_cols[0]]) if infer_cols else None,
                    "dle_latency_p99_ms": ((_num(r[p99_cols[0]]) or np.nan) *
                                           {"ms": 1.0, "s": 1000.0, "us": 1e-3}.get(lunit or "", np.nan))
                    if p99_cols and lunit else None,
                    "dle_throughput_header": header[tcs[0]] if tcs else None,
                })
    rep["dropped"] = dict(drops)
    out = pd.DataFrame(out_rows)
    out = _attach_devices(out, want="gpu")
    rep["notes"] += [
        "rows are (table row x precision): tables with per-precision throughput columns yield one row per precision; "
        "dropped counts are table rows for table-level reasons and (row x precision) cells for row-level reasons",
        "Triton tables: latency_ms = client avg latency (per_query, includes queueing at concurrency>1); "
        "dle_server_compute_infer_ms is the server-side model execution time",
        "latency_derived rows: batch (x GPUs for training) / throughput; only where throughput is in samples and not for Triton (concurrency) tables",
        "runtime 'pytorch'/'tensorflow' = the framework scripts of the README (eager vs TorchScript/XLA not always stated)",
    ]
    return _finish(out, "nvidia_dle_readme_perf_tables", rep)


# ------------------------------------------------------------------------------------------------
# NeuSight GEMM kernels
# ------------------------------------------------------------------------------------------------
def load_neusight_gemm_ops_fp32() -> pd.DataFrame:
    rep = {"dropped": {}, "notes": []}
    n = pd.read_csv(_path("neusight_gemm_ops_fp32.csv.gz"), low_memory=False)
    rep["rows_in"] = len(n)
    n = _drop(n, n.latency_ms.isna() | (n.latency_ms <= 0), "no positive latency", rep)
    flops = 2.0 * n.B.astype(float) * n.M * n.N * n.K
    out = pd.DataFrame({
        "device_raw": n.device, "n_devices": 1, "runtime": "pytorch-eager", "precision": "fp32",
        "mode": "inference", "granularity": "kernel", "model": n.op, "batch": n.B,
        "latency_ms": n.latency_ms, "latency_kind": "per_kernel_call",
        "throughput_per_s": flops / (n.latency_ms * 1e-3) / 1e12, "throughput_unit": "TFLOPS",
    })
    for c in ["M", "N", "K", "kernel", "torch", "cuda", "source"]:
        out[f"neusight_{c}"] = n[c].values
    out["neusight_split"] = np.where(n.source.str.contains("/test/"), "test", "train")
    tc = int(n.kernel.str.contains(r"tf32|hmma|s1688|s16816|i8816|bf16|f16f16", case=False, regex=True).sum())
    rep["notes"].append(f"PyTorch 2.1/cu121 FP32 (TF32 off by default for matmul); kernel names are FP32 FFMA "
                        f"(sgemm / xmma_..._ffma / cutlass simt); tensor-core (TF32/FP16) kernel names: {tc}")
    rep["notes"].append("throughput_per_s = achieved TFLOPS = 2*B*M*N*K / latency (derived)")
    out = _attach_devices(out, want="gpu")
    return _finish(out, "neusight_gemm_ops_fp32", rep)


# ------------------------------------------------------------------------------------------------
# Vidur per-operator profiles
# ------------------------------------------------------------------------------------------------
VIDUR_OPS = ["emb", "input_layernorm", "attn_pre_proj", "attn_rope", "attn_post_proj", "post_attention_layernorm",
             "mlp_up_proj", "mlp_act", "mlp_down_proj", "add"]


def load_vidur_mlp_op_times() -> pd.DataFrame:
    """microsoft/vidur data/profiling/compute/<dev>/<model>/mlp.csv -> one row per (profile row, operator)."""
    rep = {"dropped": {}, "notes": []}
    v = pd.read_csv(_path("vidur_mlp_op_times.csv.gz"))
    v = v.reset_index().rename(columns={"index": "vidur_row"})
    keep = ["vidur_row", "device", "model", "n_head", "n_kv_head", "n_embd", "n_expanded_embd", "vocab_size",
            "use_gated_mlp", "num_tokens", "tp"]
    long = v.melt(id_vars=keep, value_vars=[f"{o}_median_ms" for o in VIDUR_OPS], var_name="op", value_name="ms")
    rep["rows_in"] = len(long)
    long["op"] = long.op.str.replace("_median_ms", "", regex=False)
    long = _drop(long, long.ms.isna(), "operator time missing (NaN) in the profile", rep)
    out = pd.DataFrame({
        "device_raw": long.device, "n_devices": long.tp, "runtime": "pytorch-eager", "precision": "fp16",
        "mode": "inference", "granularity": "op", "model": long.model, "batch": 1, "seq_len": long.num_tokens,
        "latency_ms": long.ms, "latency_kind": "per_op_call",
    })
    for c in ["op", "num_tokens", "tp", "n_head", "n_kv_head", "n_embd", "n_expanded_embd", "vocab_size",
              "use_gated_mlp", "vidur_row"]:
        out[c if c.startswith("vidur_") else f"vidur_{c}"] = long[c].values
    out["vidur_precision_assumed"] = True
    out = _attach_devices(out, want="gpu")
    rep["notes"] += ["one row per (profile row, operator); seq_len = num_tokens of the batch; n_devices = TP degree "
                     "(times are per GPU shard)",
                     "precision fp16 is the README's 'presumably' (vidur_precision_assumed)",
                     "vidur device names are 'a100'/'h100'/'a40' only: A100 and H100 variants are not stated -> family_only"]
    return _finish(out, "vidur_mlp_op_times", rep)


# ------------------------------------------------------------------------------------------------
# ML.ENERGY
# ------------------------------------------------------------------------------------------------
def load_mlenergy_v1_legacy_llm() -> pd.DataFrame:
    rep = {"dropped": {}, "notes": []}
    m = pd.read_csv(_path("mlenergy_v1_legacy_llm.csv"))
    rep["rows_in"] = len(m)
    m = _drop(m, m.latency_s.isna() & m.energy_J_per_request.isna(), "no latency and no energy", rep)
    out = pd.DataFrame({
        "device_raw": m.gpu, "n_devices": 1, "runtime": "pytorch-eager", "precision": "fp16", "mode": "inference",
        "granularity": "model", "model": m.model, "batch": 1,
        "latency_ms": m.latency_s * 1000.0, "latency_kind": "per_request",
        "throughput_per_s": m.throughput_tok_s, "throughput_unit": "tokens/s",
        "power_w": m.energy_J_per_request / m.latency_s, "power_kind": "gpu_avg_derived",
        "energy_j": m.energy_J_per_request, "energy_unit": "J/request",
        "mlenergy_task": m.task, "mlenergy_response_length": m.response_length,
    })
    out = _attach_devices(out, want="gpu")
    rep["notes"] += ["leaderboard v1 (2023): PyTorch 2.0.1 + FastChat (HF transformers), batch 1, FP16, Zeus GPU energy",
                     "GPU variants are not stated ('A100', 'V100') -> family_only; 'A40' is a single SKU",
                     "power_w = energy per request / latency per request (derived)"]
    return _finish(out, "mlenergy_v1_legacy_llm", rep)


def load_mlenergy_v2_llm_diffusion() -> pd.DataFrame:
    rep = {"dropped": {}, "notes": []}
    m = pd.read_csv(_path("mlenergy_v2_llm_diffusion.csv"))
    rep["rows_in"] = len(m)
    is_llm = m._task.str.contains("text_generation")
    llm, dif = m[is_llm], m[~is_llm]
    a = pd.DataFrame({
        "device_raw": llm.GPU, "n_devices": (llm.TP.fillna(1) * llm.PP.fillna(1)), "runtime": "vllm",
        "precision": None, "mode": "inference", "granularity": "model", "model": llm.Model,
        "batch": llm["Max BS (reqs)"], "latency_ms": llm["Avg TPOT (s)"] * 1000.0, "latency_kind": "per_output_token",
        "throughput_per_s": llm["Token tput (tok/s)"], "throughput_unit": "tokens/s",
        "energy_j": llm["Energy/req (J)"], "energy_unit": "J/request",
        "mlenergy_task": llm._task, "mlenergy_avg_batch": llm["Avg BS (reqs)"],
        "mlenergy_avg_output_tokens": llm["Avg Output Tokens"], "mlenergy_file": llm._file,
    })
    e_img = dif["Energy/image (J)"]
    e_vid = dif["Energy/video (J)"]
    b = pd.DataFrame({
        "device_raw": dif.GPU, "n_devices": 1, "runtime": "diffusers", "precision": None, "mode": "inference",
        "granularity": "model", "model": dif.Model, "batch": dif["Batch size"],
        "latency_ms": dif["Batch latency (s)"] * 1000.0, "latency_kind": "per_batch_step",
        "throughput_per_s": dif["Batch size"] / dif["Batch latency (s)"],
        "throughput_unit": np.where(e_vid.notna(), "videos/s", "images/s"),
        "energy_j": e_img.fillna(e_vid), "energy_unit": np.where(e_vid.notna(), "J/video", "J/image"),
        "mlenergy_task": dif._task, "mlenergy_denoising_steps": dif["Denoising steps"],
        "mlenergy_frames": dif.Frames, "mlenergy_file": dif._file,
    })
    out = pd.concat([a, b], ignore_index=True)
    out = _drop(out, out.latency_ms.isna() & out.energy_j.isna(), "no latency and no energy", rep)
    out = _attach_devices(out, want="gpu")
    rep["notes"] += ["leaderboard v2: LLM rows served with vLLM (batch = max concurrent requests; latency = avg TPOT); "
                     "diffusion rows with diffusers (latency per batch; throughput derived = batch / batch latency)",
                     "precision None: the v2 per-config JSONs do not state the dtype",
                     "no power column in v2; energy is GPU energy (Zeus)"]
    return _finish(out, "mlenergy_v2_llm_diffusion", rep)


def _mlenergy_prec(s: pd.Series) -> pd.Series:
    return s.map({"bfloat16": "bf16", "fp8": "fp8", "mxfp4": "mxfp4", "float16": "fp16"})


def load_mlenergy_v3_llm() -> pd.DataFrame:
    rep = {"dropped": {}, "notes": []}
    m = pd.read_csv(_path("mlenergy_v3_llm.csv"))
    rep["rows_in"] = len(m)
    out = pd.DataFrame({
        "device_raw": m.gpu_model, "n_devices": m.num_gpus, "runtime": "vllm", "precision": _mlenergy_prec(m.weight_precision),
        "mode": "inference", "granularity": "model", "model": m.model_id, "batch": m.max_num_seqs,
        "latency_ms": m.median_itl_ms, "latency_kind": "per_output_token",
        "throughput_per_s": m.output_throughput_tokens_per_sec, "throughput_unit": "tokens/s",
        "power_w": m.avg_power_watts, "power_kind": "gpu_avg",
        "energy_j": m.energy_per_token_joules, "energy_unit": "J/token",
    })
    for c in ["task", "nickname", "architecture", "avg_batch_size", "avg_output_len", "energy_per_request_joules",
              "p90_itl_ms", "p95_itl_ms", "p99_itl_ms", "tensor_parallel", "expert_parallel", "data_parallel",
              "total_params_billions", "activated_params_billions", "weight_precision"]:
        out[f"mlenergy_{c}"] = m[c].values
    out = _drop(out, out.latency_ms.isna() & out.energy_j.isna(), "no latency and no energy", rep)
    out = _attach_devices(out, want="gpu", source="mlenergy_v3")
    rep["notes"] += ["vLLM serving, batch = max_num_seqs (mlenergy_avg_batch_size = observed); latency = median ITL",
                     "power_w = average GPU power summed over the num_gpus GPUs"]
    return _finish(out, "mlenergy_v3_llm", rep)


def load_mlenergy_v3_diffusion() -> pd.DataFrame:
    rep = {"dropped": {}, "notes": []}
    m = pd.read_csv(_path("mlenergy_v3_diffusion.csv"))
    rep["rows_in"] = len(m)
    video = m.energy_per_video_joules.notna()
    out = pd.DataFrame({
        "device_raw": m.gpu_model, "n_devices": m.num_gpus, "runtime": "diffusers",
        "precision": _mlenergy_prec(m.weight_precision), "mode": "inference", "granularity": "model",
        "model": m.model_id, "batch": m.batch_size, "img_size": np.where(video, m.video_height, m.image_height),
        "latency_ms": m.batch_latency_s * 1000.0, "latency_kind": "per_batch_step",
        "throughput_per_s": m.throughput_images_per_sec.fillna(m.throughput_videos_per_sec),
        "throughput_unit": np.where(video, "videos/s", "images/s"),
        "power_w": m.avg_power_watts, "power_kind": "gpu_avg",
        "energy_j": m.energy_per_image_joules.fillna(m.energy_per_video_joules),
        "energy_unit": np.where(video, "J/video", "J/image"),
    })
    for c in ["task", "nickname", "inference_steps", "image_height", "image_width", "video_height", "video_width",
              "num_frames", "fps", "ulysses_degree", "ring_degree", "total_params_billions"]:
        out[f"mlenergy_{c}"] = m[c].values
    out = _drop(out, out.latency_ms.isna() & out.energy_j.isna(), "no latency and no energy", rep)
    out = _attach_devices(out, want="gpu", source="mlenergy_v3")
    rep["notes"].append("multi-GPU rows use sequence parallelism (ulysses/ring degrees); img_size = output height")
    return _finish(out, "mlenergy_v3_diffusion", rep)


# ------------------------------------------------------------------------------------------------
# MLPerf Inference
# ------------------------------------------------------------------------------------------------
def _mlperf_runtime(fw: str, bench: str) -> str:
    f = (fw or "").lower()
    if not f or f == "nan":
        return "unspecified"
    if "tensorrt-llm" in f or "trt-llm" in f or "trtllm" in f:
        return "tensorrt-llm"
    if "vllm" in f:
        return "vllm"
    if "tensorrt" in f or re.search(r"\btrt\b", f):
        return "tensorrt"
    if "onnx" in f:
        return "onnxruntime"
    if "openvino" in f:
        return "openvino"
    if "armnn" in f:
        return "armnn"
    if "tflite" in f:
        return "tflite"
    if "qualcomm" in f or "qaic" in f:
        return "qaic-sdk"
    if "tensorflow" in f:
        return "tensorflow"
    if "pytorch" in f or "torch" in f:
        return "pytorch"
    if "cuda" in f:
        return "cuda (engine not named)"
    return "other"


def load_mlperf_inference_results() -> pd.DataFrame:
    rep = {"dropped": {}, "notes": []}
    m = pd.read_csv(_path("mlperf_inference_results.csv.gz"), low_memory=False)
    rep["rows_in"] = len(m)
    acc = m.accelerator.astype(object).where(m.accelerator.notna(), "").astype(str).str.strip()
    apn = pd.to_numeric(m.accelerators_per_node, errors="coerce")
    cpu_only = acc.isin(["", "-", "nan", "N/A"]) | (apn == 0)
    raw = np.where(cpu_only, m.host_cpu.astype(object).where(m.host_cpu.notna(), None), acc)
    scen = m.scenario.str.lower().map({"offline": "offline", "server": "server", "singlestream": "singlestream",
                                       "multistream": "multistream", "interactive": "interactive"})
    thr = m.samples_per_sec.fillna(m.completed_samples_per_sec)
    out = pd.DataFrame({
        "device_raw": raw, "_want": np.where(cpu_only, "cpu", "gpu"),
        "n_devices": np.where(cpu_only, 1, apn * m.number_of_nodes.fillna(1)),
        "runtime": [_mlperf_runtime(f, b) for f, b in zip(m.framework.astype(str), m.benchmark)],
        "precision": None, "mode": "inference", "granularity": "model", "model": m.benchmark,
        "latency_ms": m.mean_latency_ns / 1e6, "latency_kind": "per_query",
        "throughput_per_s": np.where(m.tokens_per_sec.notna(), m.tokens_per_sec, thr),
        "throughput_unit": np.where(m.tokens_per_sec.notna(), "tokens/s", "samples/s"),
        "power_w": m.avg_system_power_W_approx, "power_kind": np.where(m.avg_system_power_W_approx.notna(),
                                                                        "system_wall_avg_approx", None),
    })
    for c in ["version", "division", "submitter", "system", "benchmark", "result_valid", "samples_per_sec",
              "completed_samples_per_sec", "scheduled_samples_per_sec", "tokens_per_sec", "target_qps",
              "samples_per_query", "p90_latency_ns", "p99_latency_ns", "accelerators_per_node", "number_of_nodes",
              "host_cpu", "framework", "system_type", "hw_notes", "path"]:
        out[f"mlperf_{c}"] = m[c].values
    out["mlperf_scenario"] = scen.values
    out["mlperf_cpu_only"] = cpu_only.values
    out = _drop(out, out.throughput_per_s.isna() & out.latency_ms.isna(), "no throughput and no latency", rep)
    out = _attach_devices(out)
    # a spelling without memory/form may be completed by the system name of the same record
    fam = out.device_status.eq("family_only") & ~out.mlperf_cpu_only
    if fam.any():
        for idx in out.index[fam]:
            r = devices.resolve(f"{out.at[idx, 'device_raw']} {out.at[idx, 'mlperf_system']}", "gpu")
            if r.device_id:
                out.at[idx, "device_id"] = r.device_id
                out.at[idx, "device_status"] = "mapped"
                out.at[idx, "in_catalog"] = r.in_catalog
                out.at[idx, "device_kind"] = r.kind
                out.at[idx, "device_note"] = "resolved with the system name"
        rep["notes"].append("family_only accelerator spellings retried with the record's system name "
                            "(e.g. 'NVIDIA H100-80C' + 'vR750xa_H100_PCIe_80Cx2_TRT')")
    rep["notes"] += ["precision is not in the results table (None); batch sizes are not in results (NaN)",
                     "n_devices = accelerators_per_node x number_of_nodes; throughput is for the whole system",
                     "power_w = plain mean of the spl.txt Watts column: WALL power of the whole system (approx.)",
                     "latency_ms = mean query latency (mlperf_p90_latency_ns is the SingleStream metric)",
                     "CPU-only systems (accelerator '-' / empty / 0 per node) are resolved from host_cpu"]
    return _finish(out, "mlperf_inference_results", rep)


# ------------------------------------------------------------------------------------------------
# Lambda
# ------------------------------------------------------------------------------------------------
_LAMBDA_UNITS = "task units/s (images for resnet50/ssd, sequences for bert/gnmt?, see docs/data.md)"


def _split_count(s: str) -> tuple[str, Optional[int]]:
    m = re.search(r"(?:^|\s)(\d+)\s?x\s?(?=[A-Za-z])", s)
    if m:
        return (s[:m.start()] + " " + s[m.end():]).strip(), int(m.group(1))
    return s, None


def load_lambda_pytorch_train_throughput() -> pd.DataFrame:
    rep = {"dropped": {}, "notes": []}
    l = pd.read_csv(_path("lambda_pytorch_train_throughput.csv"))
    rep["rows_in"] = len(l)
    l = _drop(l, l.throughput.isna() | (l.throughput <= 0), "no throughput", rep)
    dev = [_split_count(x)[0] for x in l.name_gpu]
    dev = [re.sub(r"^(LambdaCloud|Dell|DellTexas|SMC|1CC|RAIDZ1)\s+", "", x) for x in dev]
    out = pd.DataFrame({
        "device_raw": dev, "n_devices": l.num_gpu, "runtime": "pytorch", "precision": l.precision.map(
            {"fp16": "amp", "fp32": "fp32"}), "mode": "training", "granularity": "model", "model": l.task,
        "batch": l.batch_size_per_gpu, "throughput_per_s": l.throughput, "throughput_unit": "samples/s (task units)",
        "lambda_name_gpu": l.name_gpu, "lambda_precision_raw": l.precision, "lambda_watt_spec": l.watt,
    })
    out = _attach_devices(out, want="gpu")
    rep["notes"] += ["lambdal/deeplearning-benchmark pytorch/ (NGC PyTorch + NVIDIA DLE training scripts); "
                     "throughput is the total over num_gpu GPUs; precision 'fp16' = DLE mixed-precision (AMP) training",
                     "lambda_watt_spec is the sum of board TDPs (spec), NOT a measurement -> not in power_w",
                     "host/vendor prefixes (LambdaCloud, Dell, SMC, 1CC, RAIDZ1, DellTexas) split off into lambda_name_gpu",
                     "no latency: throughput units differ per task, so batch/throughput is not derived"]
    return _finish(out, "lambda_pytorch_train_throughput", rep)


def load_lambda_pytorch_train_throughput_v2() -> pd.DataFrame:
    rep = {"dropped": {}, "notes": []}
    l = pd.read_csv(_path("lambda_pytorch_train_throughput_v2.csv"))
    rep["rows_in"] = len(l)
    l = _drop(l, l.throughput.isna() | (l.throughput <= 0), "no throughput", rep)
    pat = re.compile(r"_(\d+)x((?:GH|H|B)\d{3})_(\d+)GB(?:_(SXM5|SXM|PCIe))?")
    devs, ns = [], []
    for c in l.config:
        m = pat.search(c)
        if m:
            devs.append(f"{m.group(2)} {m.group(3)}GB {m.group(4) or ''}".strip())
            ns.append(int(m.group(1)))
        else:
            devs.append(None)
            ns.append(None)
    out = pd.DataFrame({
        "device_raw": devs, "n_devices": ns, "runtime": "pytorch",
        "precision": l.precision.map({"fp16": "amp", "fp32": "fp32"}), "mode": "training", "granularity": "model",
        "model": l.task, "throughput_per_s": l.throughput, "throughput_unit": "samples/s (task units)",
        "lambda_config": l.config, "lambda_precision_raw": l.precision,
        "lambda_backup_copy": l.config.str.endswith("_bk"),
    })
    out = _attach_devices(out, want="gpu")
    rep["notes"] += ["device and GPU count parsed from the config name ('..._8xH100_80GB_SXM5_...'); no batch column",
                     "'B200_192GB' = the HGX/DGX B200 (180 GB usable) -> b200-sxm-180gb; 'H200_140GB_SXM' -> h200-sxm-141gb",
                     "lambda_backup_copy marks '_v2_bk' configs (a repeated run)"]
    return _finish(out, "lambda_pytorch_train_throughput_v2", rep)


# ------------------------------------------------------------------------------------------------
# HELP latency (large): filter while reading
# ------------------------------------------------------------------------------------------------
HELP_DEVICE_SPELLING = {  # HELP file-name device -> a spelling devices.resolve understands (source-faithful)
    "1080ti": "GeForce GTX 1080 Ti", "2080ti": "GeForce RTX 2080 Ti", "titan_rtx": "TITAN RTX",
    "titanx": "TITAN X", "titanxp": "TITAN Xp", "titan_xp": "TITAN Xp", "v100": "V100",
    "gold_6226": "Intel Xeon Gold 6226", "gold_6240": "Intel Xeon Gold 6240",
    "silver_4114": "Intel Xeon Silver 4114", "silver_4210r": "Intel Xeon Silver 4210R",
    "raspi4": "Raspberry Pi 4 Broadcom BCM2711", "pixel2": "Pixel 2", "pixel3": "Pixel 3",
    "samsung_a50": "Samsung A50", "samsung_s7": "Samsung S7", "essential_ph_1": "Essential PH-1",
    "eyeriss": "Eyeriss (simulated ASIC)", "fpga": "FPGA (HW-NAS-Bench estimate)",
}


def _help_split(device_batch: str) -> tuple[str, Optional[float]]:
    """'titan_rtx_32' -> ('titan_rtx', 32); 'gold_6226' -> ('gold_6226', None): only GPU names carry a batch."""
    for dev in sorted(HELP_DEVICE_SPELLING, key=len, reverse=True):
        if device_batch == dev:
            return dev, None
        if device_batch.startswith(dev + "_") and device_batch[len(dev) + 1:].isdigit():
            return dev, float(device_batch[len(dev) + 1:])
    return device_batch, None


def load_help_latency_long(devices_filter: Optional[Iterable[str]] = None,
                           search_spaces: Optional[Iterable[str]] = None,
                           chunksize: int = 200_000) -> pd.DataFrame:
    """HayeonLee/HELP latency tables. 616k rows; pass devices_filter (HELP device names like '2080ti',
    or PerfCard ids) and/or search_spaces ('nasbench201', 'fbnet', 'ofa') to read only what you need."""
    rep = {"dropped": {}, "notes": []}
    dev_set = set(devices_filter) if devices_filter else None
    ss_set = set(search_spaces) if search_spaces else None
    parts = []
    rows_in = 0
    for ch in pd.read_csv(_path("help_latency_long.csv.gz"), chunksize=chunksize,
                          dtype={"arch_str": "string", "search_space": "category", "device_batch": "category"}):
        rows_in += len(ch)
        db = ch.device_batch.astype(str)
        split = {x: _help_split(x) for x in db.unique()}
        ch = ch.assign(_dev=db.map(lambda x: split[x][0]), _b=db.map(lambda x: split[x][1]).astype(float))
        if ss_set is not None:
            ch = ch[ch.search_space.astype(str).isin(ss_set)]
        if dev_set is not None:
            ids = ch._dev.map(lambda d: devices.map_device(HELP_DEVICE_SPELLING.get(d, d)))
            ch = ch[ch._dev.isin(dev_set) | ids.isin(dev_set)]
        parts.append(ch)
    h = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    rep["rows_in"] = rows_in
    if dev_set is not None or ss_set is not None:
        rep["notes"].append(f"filtered: devices={sorted(dev_set) if dev_set else 'all'} "
                            f"search_spaces={sorted(ss_set) if ss_set else 'all'}")
    h = _drop(h, h.latency_ms.isna() | (h.latency_ms <= 0), "no positive latency", rep)
    gpu_like = {"1080ti", "2080ti", "titan_rtx", "titanx", "titanxp", "titan_xp", "v100"}
    out = pd.DataFrame({
        "device_raw": h._dev.astype(str), "_resolve": h._dev.astype(str).map(lambda d: HELP_DEVICE_SPELLING.get(d, d)),
        "n_devices": 1, "runtime": "unspecified", "precision": None, "mode": "inference", "granularity": "model",
        "model": h.search_space.astype(str) + ":" + h.arch_index.astype(str), "batch": h._b,
        "latency_ms": h.latency_ms, "latency_kind": "per_batch_step",
        "help_search_space": h.search_space.astype(str), "help_arch_index": h.arch_index, "help_arch_str": h.arch_str,
        "help_device_batch": h.device_batch.astype(str),
    })
    out["_want"] = np.where(out.device_raw.isin(list(gpu_like)), "gpu", None)
    out = _attach_devices(out, resolve_col="_resolve")
    out.drop(columns=["_resolve"], inplace=True)
    for c in ("model", "device_raw", "help_search_space", "help_device_batch"):
        out[c] = out[c].astype("category")
    rep["notes"] += ["latency_ms as stored by HELP (README: units presumably ms); batch from the file name "
                     "(eyeriss/fpga have none: simulated/estimated hardware)",
                     "runtime and precision are not stated by the source (PyTorch GPU / TFLite mobile per HW-NAS-Bench)",
                     "'titanx' is ambiguous (Maxwell GTX TITAN X vs Pascal TITAN X) -> family_only; 'v100' variant not stated"]
    return _finish(out, "help_latency_long", rep)


# ------------------------------------------------------------------------------------------------
# ncnn benchncnn
# ------------------------------------------------------------------------------------------------
def _ncnn_gpu_spelling(section: str) -> Optional[str]:
    """The GPU of a benchncnn section, or None when the section names no GPU or several."""
    s = section
    names = re.findall(r"(NVIDIA [^,()]*?(?:RTX ?\d{4}(?: Ti)?(?: Laptop GPU)?|GTX \d{4}(?: Ti)?|Quadro RTX \d{4}|"
                       r"V100-PCIE-32GB|RTX A\d{4}|RTX\d{4})|AMD Radeon RX \d{4} XT|Radeon Pro \d{3}X|"
                       r"Intel\(R\) UHD Graphics \d{3}|Intel UHD Graphics \d{3})", s, flags=re.I)
    jets = re.search(r"Jetson (AGX Orin|Orin Nano|AGX Xavier|Nano|TX2 NX)", s)
    if jets:
        return f"Jetson {jets.group(1)}"
    if "MacBook Pro (13-inch, M1, 2020)" in s:
        return "MacBook Pro 13-inch M1 2020"
    if len(names) == 1:
        return names[0] + (" notebook" if "notebook" in s.lower() else "")
    return None


def load_ncnn_benchncnn() -> pd.DataFrame:
    rep = {"dropped": {}, "notes": []}
    n = pd.read_csv(_path("ncnn_benchncnn.csv"))
    rep["rows_in"] = len(n)
    n = _drop(n, n.avg_ms.isna() | (n.avg_ms <= 0), "no positive avg latency", rep)
    gpu = n.gpu_device >= 0
    gpu_spell = {s: _ncnn_gpu_spelling(s) for s in n.device_section.unique()}
    multi = n[gpu].groupby("device_section").gpu_device.nunique()
    resolve_on = []
    for sec, g in zip(n.device_section, gpu):
        if not g:
            resolve_on.append(sec)
        elif gpu_spell[sec] and multi.get(sec, 1) == 1:
            resolve_on.append(gpu_spell[sec])
        else:
            resolve_on.append(sec)  # resolves to iGPU/out-of-scope or unknown with a reason
    out = pd.DataFrame({
        "device_raw": n.device_section, "_resolve": resolve_on, "_want": np.where(gpu, "gpu", "cpu"),
        "n_devices": 1, "runtime": np.where(gpu, "ncnn-vulkan", "ncnn"),
        "precision": np.where(n.model.str.contains("int8"), "int8", None), "mode": "inference",
        "granularity": "model", "model": n.model, "batch": 1, "latency_ms": n.avg_ms, "latency_kind": "per_inference",
        "ncnn_min_ms": n.min_ms, "ncnn_max_ms": n.max_ms, "ncnn_num_threads": n.num_threads,
        "ncnn_gpu_device": n.gpu_device, "ncnn_run_idx": n.run_idx,
    })
    out = _attach_devices(out, resolve_col="_resolve")
    out.drop(columns=["_resolve"], inplace=True)
    amb = (out.ncnn_gpu_device >= 0) & out.device_raw.map(lambda s_: multi.get(s_, 1) > 1)
    out.loc[amb, ["device_id", "device_family", "device_kind"]] = [None, None, "gpu"]
    out.loc[amb, "device_status"] = "ambiguous"
    out.loc[amb, "in_catalog"] = False
    out.loc[amb, "device_note"] = "section has several Vulkan GPU indices; which GPU each index is is not stated"
    rep["notes"] += ["benchncnn batch-1 latency (avg over loops); gpu_device >= 0 = Vulkan GPU run, -1 = CPU run",
                     "precision None for non-int8 models: ncnn enables fp16/bf16 storage+arithmetic where the "
                     "hardware supports it, so the arithmetic precision is device-dependent",
                     "GPU rows of sections naming several GPUs (gpu index -> GPU unknown) stay unmapped"]
    return _finish(out, "ncnn_benchncnn", rep)


# ------------------------------------------------------------------------------------------------
# llama.cpp (XiongjieDai README tables)
# ------------------------------------------------------------------------------------------------
def load_llamacpp_gpu_bench_xiongjiedai() -> pd.DataFrame:
    rep = {"dropped": {}, "notes": []}
    q = pd.read_csv(_path("llamacpp_gpu_bench_xiongjiedai.csv"))
    rep["rows_in"] = len(q)
    rows, drops = [], Counter()
    detail_vals = set()
    overview = []
    for (hp, ti), g in q.groupby(["heading_path", "table_idx"], sort=False):
        header = json.loads(g.header_json.iloc[0])
        if header[:2] == ["GPU", "Model"]:
            gpu = None
            for rj in g.row_json:
                r = json.loads(rj)
                gpu = r[0].strip() or gpu
                model = r[1].strip()
                size, quant = model.split(" ", 1)
                for h, cell in zip(header[2:], r[2:]):
                    phase, length = h.split()
                    v = _num(cell)
                    if v is None:
                        drops["OOM / empty cell" if "OOM" in cell else "non-numeric cell"] += 1
                        continue
                    dev, cnt = gpu, 1
                    m = re.match(r"(.+?)\s*\*\s*(\d+)$", gpu)
                    if m:
                        dev, cnt = m.group(1), int(m.group(2))
                    detail_vals.add((gpu, model, h, v))
                    L = int(length)
                    rows.append({
                        "device_raw": dev, "n_devices": cnt, "runtime": "llama.cpp",
                        "precision": {"Q4_K_M": "int4", "F16": "fp16"}.get(quant, quant.lower()),
                        "mode": "inference", "granularity": "model", "model": f"llama3-{size.lower()}", "batch": 1,
                        "seq_len": L,
                        "latency_ms": (1000.0 / v) if phase == "tg" else (L / v * 1000.0),
                        "latency_kind": "per_output_token" if phase == "tg" else "per_prompt",
                        "latency_derived": True, "throughput_per_s": v, "throughput_unit": "tokens/s",
                        "llamacpp_phase": {"tg": "text_generation", "pp": "prompt_processing"}[phase],
                        "llamacpp_quant": quant, "llamacpp_heading": hp.split(" > ")[-1],
                    })
        elif header[0] == "GPU":
            overview.append((ti, header, g))
        else:
            drops["not a speed table (perplexity / VRAM)"] += len(g)
    # overview tables repeat tg 1024 (table 0) and pp 1024 (table 1): drop, check they agree
    mismatched = 0
    for ti, header, g in overview:
        h = "tg 1024" if ti == 0 else "pp 1024"
        for rj in g.row_json:
            r = json.loads(rj)
            for mname, cell in zip(header[1:], r[1:]):
                v = _num(cell)
                if v is None:
                    continue
                if (r[0].strip(), mname, h, v) not in detail_vals:
                    mismatched += 1
        drops["overview table (repeats tg/pp 1024 of the detailed tables)"] += len(g)
    rep["notes"].append(f"overview cells not found verbatim in the detailed tables: {mismatched} "
                        "(detailed tables truncated in the snapshot or rounding); overview rows are still dropped")
    rep["dropped"] = dict(drops)
    out = pd.DataFrame(rows)
    out = _attach_devices(out, want="gpu")
    rep["notes"] += ["one row per (GPU, model, tg/pp length); batch 1 (single stream); "
                     "latency derived: tg -> ms per generated token = 1000/tps; pp -> ms per prompt = len/tps*1000",
                     "multi-GPU rows ('3090 24GB * 4') have n_devices > 1 (llama.cpp layer split)"]
    return _finish(out, "llamacpp_gpu_bench_xiongjiedai", rep)


# ------------------------------------------------------------------------------------------------
# TensorRT-LLM perf overview
# ------------------------------------------------------------------------------------------------
def load_trtllm_perf_overview() -> pd.DataFrame:
    rep = {"dropped": {}, "notes": []}
    t = pd.read_csv(_path("trtllm_perf_overview.csv"))
    rep["rows_in"] = len(t)
    t = _drop(t, t.total_output_tokens_per_s.isna(), "no throughput", rep)
    out = pd.DataFrame({
        "device_raw": t.gpu, "n_devices": t.tp, "runtime": "tensorrt-llm", "precision": t.precision.str.lower(),
        "mode": "inference", "granularity": "model", "model": t.model, "seq_len": t.isl,
        "throughput_per_s": t.total_output_tokens_per_s, "throughput_unit": "tokens/s",
        "trtllm_isl": t.isl, "trtllm_osl": t.osl, "trtllm_tp": t.tp,
    })
    out = _attach_devices(out, want="gpu", source="trtllm_perf_overview")
    rep["notes"] += ["trtllm-bench offline max throughput (PyTorch backend, infinite request rate); total output "
                     "tokens/s of the whole TP group; no batch / latency",
                     "GPU variants from the page's Hardware list: H100 SXM 80GB, H200 SXM 141GB, B200 180GB, GB200 192GB"]
    return _finish(out, "trtllm_perf_overview", rep)


# ------------------------------------------------------------------------------------------------
# stas00 MAMF
# ------------------------------------------------------------------------------------------------
def load_stas00_mamf_measured_matmul() -> pd.DataFrame:
    rep = {"dropped": {}, "notes": []}
    s = pd.read_csv(_path("stas00_mamf_measured_matmul.csv"))
    rep["rows_in"] = len(s)
    s = _drop(s, s.mamf_tflops.isna(), "no measured TFLOPS (spec-only row)", rep)
    out = pd.DataFrame({
        "device_raw": s.accelerator, "n_devices": 1, "runtime": "pytorch-eager",
        "precision": s.dtype.map({"bf16": "bf16", "fp8_e4m3": "fp8"}), "mode": "inference", "granularity": "kernel",
        "model": "torch.mm", "throughput_per_s": s.mamf_tflops, "throughput_unit": "TFLOPS",
        "mamf_theory_tflops": s.theory_tflops,
        "mamf_efficiency": pd.to_numeric(s.efficiency.astype(str).str.rstrip("%"), errors="coerce") / 100.0,
        "mamf_best_shape_MxNxK": s.best_shape_MxNxK, "mamf_torch": s.torch, "mamf_notes": s.notes,
    })
    out = _attach_devices(out)
    rep["notes"].append("max achievable matmul TFLOPS (best shape of a sweep, mean of 100 iters); "
                        "'NVIDIA A100 SXM'/'A100 PCIe' do not state 40/80 GB -> family_only (compute peak is the same)")
    return _finish(out, "stas00_mamf_measured_matmul", rep)


# ------------------------------------------------------------------------------------------------
# Ultralytics YOLO11
# ------------------------------------------------------------------------------------------------
def load_ultralytics_yolo11_t4() -> pd.DataFrame:
    rep = {"dropped": {}, "notes": []}
    u = pd.read_csv(_path("ultralytics_yolo11_t4.csv"))
    rep["rows_in"] = len(u)
    base = {"mode": "inference", "granularity": "model", "batch": 1, "n_devices": 1, "latency_kind": "per_inference"}
    gpu = pd.DataFrame({**base, "device_raw": "T4", "runtime": "tensorrt", "precision": "fp16", "model": u.model,
                        "img_size": u.img_size, "latency_ms": u.t4_tensorrt10_ms, "_want": "gpu"})
    cpu = pd.DataFrame({**base, "device_raw": "Amazon EC2 P4d CPU", "runtime": "onnxruntime", "precision": "fp32",
                        "model": u.model, "img_size": u.img_size, "latency_ms": u.cpu_onnx_ms, "_want": "cpu"})
    out = pd.concat([gpu, cpu], ignore_index=True)
    out["ultra_task"] = list(u.task) * 2
    out["ultra_params_M"] = list(u.params_M) * 2
    out["ultra_flops_B"] = list(u.flops_B) * 2
    out = _drop(out, out.latency_ms.isna(), "no latency", rep)
    out = _attach_devices(out, source="ultralytics_yolo11_t4")
    rep["notes"] += ["T4 TensorRT 10 FP16 (ultralytics convention); CPU = ONNX Runtime on an Amazon EC2 P4d host "
                     "(Xeon Platinum 8275CL per AWS; threads not stated); batch 1; two rows per model",
                     "rows_in counts CSV rows (each gives a T4 and a CPU row)"]
    return _finish(out, "ultralytics_yolo11_t4", rep)


# ------------------------------------------------------------------------------------------------
# Sources whose GPU rows cannot reach >95% exact-part coverage because the source itself does not say which
# variant ran (checked by test_sources.py: every such row must still carry family + reason, never be guessed).
GPU_COVERAGE_EXCEPTIONS: dict[str, str] = {
    "vidur_mlp_op_times": "device folders are 'a100' / 'h100' only (40/80 GB, SXM/PCIe not stated); a40 is exact",
    "mlenergy_v1_legacy_llm": "leaderboard v1 names 'A100' and 'V100' without memory/form factor; A40 is exact",
    "lambda_pytorch_train_throughput": "'V100 16GB' (Lambda Cloud) does not say SXM2 or PCIe",
    "stas00_mamf_measured_matmul": "'A100 SXM' / 'A100 PCIe' without memory, 'GH200' without memory",
    "help_latency_long": "'titanx' (Maxwell or Pascal TITAN X) and 'v100' (variant not stated)",
}

SOURCES: dict[str, Callable[[], pd.DataFrame]] = {
    "timm_benchmarks_long": load_timm_benchmarks_long,
    "nvidia_dle_readme_perf_tables": load_nvidia_dle_readme_perf_tables,
    "neusight_gemm_ops_fp32": load_neusight_gemm_ops_fp32,
    "vidur_mlp_op_times": load_vidur_mlp_op_times,
    "mlenergy_v1_legacy_llm": load_mlenergy_v1_legacy_llm,
    "mlenergy_v2_llm_diffusion": load_mlenergy_v2_llm_diffusion,
    "mlenergy_v3_llm": load_mlenergy_v3_llm,
    "mlenergy_v3_diffusion": load_mlenergy_v3_diffusion,
    "mlperf_inference_results": load_mlperf_inference_results,
    "lambda_pytorch_train_throughput": load_lambda_pytorch_train_throughput,
    "lambda_pytorch_train_throughput_v2": load_lambda_pytorch_train_throughput_v2,
    "help_latency_long": load_help_latency_long,
    "ncnn_benchncnn": load_ncnn_benchncnn,
    "llamacpp_gpu_bench_xiongjiedai": load_llamacpp_gpu_bench_xiongjiedai,
    "trtllm_perf_overview": load_trtllm_perf_overview,
    "stas00_mamf_measured_matmul": load_stas00_mamf_measured_matmul,
    "ultralytics_yolo11_t4": load_ultralytics_yolo11_t4,
}


def load(name: str, **kwargs) -> pd.DataFrame:
    if name not in SOURCES:
        raise KeyError(f"unknown source {name!r}; known: {', '.join(SOURCES)}")
    return SOURCES[name](**kwargs)


def load_all(names: Optional[Iterable[str]] = None, common_only: bool = True) -> pd.DataFrame:
    """Concatenate sources (common columns only by default). Large: prefer load(name)."""
    frames = []
    for n in (names or SOURCES):
        df = load(n)
        frames.append(df[COMMON_COLUMNS] if common_only else df)
    return pd.concat(frames, ignore_index=True)
