"""Fits the roofline predictor's constants on public measurements and writes weights/roofline.json.

Stage A  kernel level, FP32 GEMMs (NeuSight, PyTorch 2.1 cuBLAS, kernel times): per GPU family the
         achievable FP32 GEMM efficiency, streaming-memory efficiency, the reduction length at which a
         GEMM reaches half its efficiency, the output-tile edge of the wave model and the launch floor.
Stage B  max achievable tensor-core matmul (stas00/ml-engineering MAMF): efficiency at saturation.
Stage C  whole models (timm benchmarks, NVIDIA DeepLearningExamples): convolution efficiencies and the
         per-op dispatch cost of PyTorch eager, on zoo graphs matched to the measured models
         (scripts/calibration/calibrate_models.py; run after the zoo is exported).

Every prediction during fitting comes from the C++ predictor itself (`perfcard eval`), so the fitted
numbers are the ones the CLI and the web page use. Rows are split 80/20 by shape (stage A) or by model
family (stage C); held-out errors go to docs/accuracy.md via scripts/calibration/evaluate_roofline.py.

Run: /usr/bin/python3 -m scripts.calibration.calibrate_roofline   (needs ../shared/data/public and a native build)
"""
import argparse
import datetime
import json
import math
import os

import numpy as np
import pandas as pd
from scipy.optimize import minimize

from scripts import paths
from scripts.roofline.gemm_models import write_gemm_models
from scripts.roofline.kernels import NEUSIGHT_DEVICES, gemm_queries, load_neusight
from scripts.roofline.perfcard_eval import run_queries, write_constants

PUBLIC = paths.SHARED_DATA
OUT = paths.ROOFLINE_JSON

# Device family per catalog arch prefix (weights/devices.json "arch"); CPUs share one family.
ARCH_FAMILY = {"Pascal": "pascal", "Volta": "volta", "Turing": "turing", "Ampere": "ampere", "Ada": "ada", "Hopper": "hopper",
               "Blackwell": "blackwell", "cpu": "cpu"}

# stas00 MAMF rows (bf16, max achievable / theoretical) per family.
MAMF_ROWS = {"ampere": "NVIDIA A100 SXM", "hopper": "NVIDIA H100 SXM", "blackwell": "NVIDIA B200 SXM"}

RUNTIMES = {
    # One PyTorch op timed with a synchronize around it, as NeuSight measured: host dispatch + kernel.
    "pytorch-op": {"kind": "gpu", "dispatch_us": None, "fuse_elementwise": False, "fuse_bias": False,
                   "conv_fp32_as_tf32": False, "matmul_fp32_as_tf32": False,
                   "context_mb": 0.0, "workspace_mb": 0.0, "allocator_overhead": 0.0,
                   "source": "single op with synchronization (kernel-level harnesses such as NeuSight's)"},
    # Kernel times as a profiler reports them: no host dispatch, nothing fused. Used for kernel-level data.
    "kernel": {"kind": "gpu", "dispatch_us": 0.0, "fuse_elementwise": False, "fuse_bias": False,
               "conv_fp32_as_tf32": False, "matmul_fp32_as_tf32": False,
               "context_mb": 0.0, "workspace_mb": 0.0, "allocator_overhead": 0.0,
               "source": "kernel-level timing (profiler), no runtime"},
    # PyTorch eager. Fusion: nn.Linear's bias rides in the GEMM epilogue; cuDNN convolutions run fp32 as
    # TF32 by default (torch.backends.cudnn.allow_tf32 = True) while matmuls do not (allow_tf32 = False
    # since 1.12). Memory: ~300 MB CUDA context with lazy module loading (CUDA >= 11.7, pytorch#107667);
    # workspaces: cuBLAS ':4096:2:16:8' = 8.125 MiB plus cuBLASLt 32 MiB on Hopper (4 MiB before; pytorch#120925).
    # Memory follows the model's Python (a module's inputs stay referenced by its caller until it returns)
    # and the CUDA caching allocator's segments (c10/cuda/CUDACachingAllocator.cpp's documented sizes).
    "pytorch-eager": {"kind": "gpu", "dispatch_us": None, "fuse_elementwise": False, "fuse_bias": True,
                      "fuse_decomposed": True, "module_frames": True, "caching_allocator": True,
                      "conv_fp32_as_tf32": True, "matmul_fp32_as_tf32": False,
                      "context_mb": 300.0, "workspace_mb": 40.125, "allocator_overhead": 0.0,
                      "source": "context: pytorch/pytorch#107667 (ptrblck, 2023: ~300 MB with CUDA lazy loading); "
                                "workspace: PyTorch cuBLAS default :4096:2:16:8 (8.125 MiB) + cuBLASLt 32 MiB on "
                                "sm90 (pytorch/pytorch#120925, citing the cuBLAS guide), an upper bound before Hopper; "
                                "caching-allocator fragmentation not modelled"},
    # ONNX Runtime on CPUs: graph optimizations fuse conv+activation and pointwise chains.
    "onnxruntime": {"kind": "cpu", "dispatch_us": None, "fuse_elementwise": True, "fuse_bias": True,
                    "fuse_decomposed": True,
                    "conv_fp32_as_tf32": False, "matmul_fp32_as_tf32": False,
                    "context_mb": 0.0, "workspace_mb": 0.0, "allocator_overhead": 0.0,
                    "source": "CPU: memory is host RAM; runtime footprint not modelled"},
}
# PyTorch eager's kernels captured once and replayed as a CUDA graph (torch.cuda.CUDAGraph,
# make_graphed_callables; what torch.compile's "reduce-overhead" mode adds to its own fusion): eager's
# kernels, memory and libraries, but no host dispatch per op. What remains per kernel is the GPU front end
# issuing the next node, about a microsecond (order of magnitude from NVIDIA's "Getting Started with CUDA
# Graphs", developer.nvidia.com/blog/cuda-graphs/). The estimate only: stage H (calibrate_cuda_graphs.py)
# fits it on our torch.compile reduce-overhead rows, where graph replay starts each node after its
# predecessor (serial_issue) and the wrapper costs once per step (step_us). The learned predictors never
# trained on this runtime.
RUNTIMES["pytorch-cuda-graphs"] = {
    **RUNTIMES["pytorch-eager"], "dispatch_us": 1.0,
    "source": "eager's kernels replayed from a CUDA graph: eager's memory figures (the graph's private pool holds "
              "the same activations); issue time per kernel: stage A's estimate ~1 us (NVIDIA CUDA Graphs blog), "
              "replaced where stage H fitted it"}


def require_public():
    if not os.path.isdir(PUBLIC):
        raise SystemExit(f"{PUBLIC} is missing: it holds the public measurements (see ../shared/data/README.md). "
                         "Clone the project with its shared/ folder beside it, then rerun.")


def initial_family():
    # Starting points for the optimizer only; every field is refitted or replaced by a measurement below.
    return {"gemm_eff_tensor": 0.7, "gemm_eff_fp32": 0.7, "conv_eff_tensor": 0.5, "conv_eff_fp32": 0.5,
            "vector_eff": 1.0, "mem_eff": 0.8, "k_half": 64.0, "tile": 128.0, "launch_us": 5.0}


def constants_doc(families, runtimes, provenance, accuracy=None):
    # While fitting, families borrowed at the end (pascal) do not exist yet: the core refuses an arch that
    # maps to a family the document lacks, so only the present ones are mapped.
    arch_family = {a: f for a, f in ARCH_FAMILY.items() if f in families}
    return {"format_version": "1.1", "predictor": "roofline", "version": "roofline-1.0",
            "provenance": provenance, "arch_family": arch_family, "families": families,
            "runtimes": runtimes, "power": {"gamma": 1.0, "floor": 0.3}, "accuracy": accuracy or {}}


def log_errors(pred, meas):
    pred = np.asarray(pred, dtype=float)
    return np.log(np.maximum(pred, 1e-9) / np.asarray(meas, dtype=float))


def measured_memory_roof(df, catalog, log):
    """Per family, the memory roof as measured: the 95th percentile of achieved bandwidth over peak among
    kernels whose operands are 4x larger than L2 (smaller ones are served partly from L2), the best
    device of the family. Like MAMF for compute: what streaming kernels really reach."""
    roof = {}
    for name, (dev, fam, note) in NEUSIGHT_DEVICES.items():
        spec = catalog[dev]
        rows = df[df.device == name]
        nbytes = 4.0 * (rows.B * rows.M * rows.K + rows.B * rows.K * rows.N + rows.B * rows.M * rows.N)
        flops = 2.0 * rows.B * rows.M * rows.N * rows.K
        ridge = spec["fp32_tflops"] * 1e12 / (spec["bw"] * 1e9)  # flop/byte where the roofs meet
        big = (nbytes > 4 * spec["l2_mb"] * 2**20) & (flops / nbytes < ridge / 4)
        achieved = (nbytes[big] / (rows.latency_ms[big] / 1e3)) / (spec["bw"] * 1e9)
        if len(achieved) < 20:
            log(f"memory roof {fam:8s} {name}: only {len(achieved)} memory-bound kernels beyond L2; not used")
            continue
        eff = float(min(1.0, np.percentile(achieved, 95)))
        log(f"memory roof {fam:8s} {name}: {len(achieved)} memory-bound kernels beyond L2, p95 of achieved/peak = {eff:.3f}")
        roof[fam] = max(roof.get(fam, 0.0), eff)
    return roof


def load_catalog():
    with open(paths.DEVICES_JSON) as f:
        devs = json.load(f)["devices"]
    val = lambda x: x["value"] if isinstance(x, dict) else x
    return {d["id"]: {"bw": val(d["memory_bandwidth_gbs"]), "l2_mb": val(d.get("l2_mb", {"value": 0})) or 0,
                      "fp32_tflops": val(d["peak_tflops"]["fp32"])}
            for d in devs if d["kind"] == "gpu"}


def fit_stage_a(df, gemm_paths, families, runtimes, log):
    """Per family, jointly over its devices: gemm_eff_fp32, mem_eff, k_half and the harness's per-call
    host cost by Nelder-Mead; the wave model's tile edge by grid search. Every NeuSight timing carries a
    25-40 us floor (host dispatch + synchronize), so the GPU-side launch floor is not identifiable here
    and is left at 0: host dispatch, which always exceeds it in eager mode, accounts for small kernels."""
    report = {}
    fams = {}
    for name, (dev, fam, note) in NEUSIGHT_DEVICES.items():
        fams.setdefault(fam, []).append(name)
    for fam, names in fams.items():
        rows = df[df.device.isin(names)]
        train, test = rows[rows.split == "train"], rows[rows.split == "test"]
        queries = gemm_queries(train, gemm_paths)

        def unpack(theta, tile):
            return dict(gemm_eff_fp32=1 / (1 + math.exp(-theta[0])), k_half=math.exp(theta[1]), launch_us=0.0,
                        tile=tile), math.exp(theta[2])

        def with_params(theta, tile):
            f, dispatch = unpack(theta, tile)
            fs = dict(families)
            fs[fam] = dict(families[fam], **f)
            rts = json.loads(json.dumps(runtimes))
            rts["pytorch-op"]["dispatch_us"] = dispatch
            return constants_doc(fs, rts, "fitting")

        best = None
        for tile in (64.0, 128.0, 256.0):
            def objective(theta):
                res = run_queries(queries, with_params(theta, tile))
                e = log_errors([x["latency_ms"] for x in res], train.latency_ms)
                return float(np.mean(e ** 2))
            x0 = np.array([1.0, math.log(64), math.log(30)])
            opt = minimize(objective, x0, method="Nelder-Mead", options={"maxiter": 200, "xatol": 1e-3, "fatol": 1e-5})
            if best is None or opt.fun < best[0]:
                best = (opt.fun, tile, opt.x)
        loss, tile, x = best
        fitted, dispatch = unpack(x, tile)
        families[fam].update(fitted)
        res = run_queries(gemm_queries(test, gemm_paths), with_params(x, tile))
        pred = np.array([r["latency_ms"] for r in res])
        ape = np.abs(pred / test.latency_ms.values - 1)
        notes = "; ".join(NEUSIGHT_DEVICES[n][2] for n in names if NEUSIGHT_DEVICES[n][2])
        report[fam] = {"devices": [NEUSIGHT_DEVICES[n][0] for n in names], "source_devices": names, "note": notes,
                       "train_rows": len(train), "test_rows": len(test), "test_mape": float(np.mean(ape)),
                       "test_median_ape": float(np.median(ape)), "harness_dispatch_us": round(dispatch, 3),
                       **{k: round(v, 6) for k, v in fitted.items()}}
        log(f"stage A {fam:8s} {len(names)} device(s) train {len(train):5d} test {len(test):5d} "
            f"MAPE {np.mean(ape):6.1%} median {np.median(ape):6.1%} dispatch {dispatch:5.1f}us "
            + " ".join(f"{k}={v:.3g}" for k, v in fitted.items()))
    return report


def stage_b(families, log):
    mamf = pd.read_csv(os.path.join(PUBLIC, "stas00_mamf_measured_matmul.csv"))
    mamf = mamf[(mamf.dtype == "bf16") & mamf.mamf_tflops.notna()]
    measured = {}
    for fam, acc in MAMF_ROWS.items():
        row = mamf[mamf.accelerator == acc].iloc[0]
        measured[fam] = float(row.mamf_tflops) / float(row.theory_tflops)
        log(f"stage B {fam:8s} {acc}: {row.mamf_tflops} of {row.theory_tflops} TFLOPS = {measured[fam]:.3f}")
    borrowed = float(np.mean(list(measured.values())))
    notes = {}
    for fam in families:
        if fam == "cpu":
            continue
        if fam in measured:
            families[fam]["gemm_eff_tensor"] = measured[fam]
            notes[fam] = f"stas00 MAMF bf16 {MAMF_ROWS[fam]}"
        else:
            families[fam]["gemm_eff_tensor"] = borrowed
            notes[fam] = "no MAMF measurement: mean of measured families " + ", ".join(sorted(measured))
    return notes


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=600, help="NeuSight rows per device and split (default 600)")
    args = ap.parse_args()
    require_public()
    log_lines = []

    def log(s):
        print(s, flush=True)
        log_lines.append(s)

    families = {f: initial_family() for f in ("volta", "turing", "ampere", "ada", "hopper", "blackwell", "cpu")}
    runtimes = json.loads(json.dumps(RUNTIMES))
    # Until stage C has run, dispatch costs are unfitted: the file says so and predictions carry it.
    for r in runtimes.values():
        if r["dispatch_us"] is None:
            r["dispatch_us"] = 0.0
    gemm_paths = write_gemm_models(os.path.join(paths.BUILD, "calibration"))
    full, df = load_neusight(args.rows)
    roof = measured_memory_roof(full, load_catalog(), log)
    for fam, eff in roof.items():
        families[fam]["mem_eff"] = eff
    # Without memory-bound measurements, HBM data-center parts take the HBM data-center family's roof.
    borrowed_roof = [f for f in ("hopper", "blackwell") if f not in roof]
    for fam in borrowed_roof:
        families[fam]["mem_eff"] = roof["ampere"]
    stage_a = fit_stage_a(df, gemm_paths, families, runtimes, log)
    # Host dispatch of one eager op, as the kernel-level harnesses measured it (median over families);
    # stage C refits PyTorch eager's on whole models.
    harness = float(np.median([r["harness_dispatch_us"] for r in stage_a.values()]))
    runtimes["pytorch-op"]["dispatch_us"] = harness
    runtimes["pytorch-eager"]["dispatch_us"] = harness
    # Blackwell has no FP32 GEMM measurements: it takes Hopper's kernel-level constants.
    for k in ("gemm_eff_fp32", "k_half", "tile", "launch_us"):
        families["blackwell"][k] = families["hopper"][k]
    stage_b_notes = stage_b(families, log)
    # Convolutions and pointwise work are fitted by stage C; until then they assume the GEMM efficiency
    # (implicit-GEMM convolution) and that pointwise maths never binds before memory does.
    for fam, f in families.items():
        f["conv_eff_tensor"] = f["gemm_eff_tensor"]
        f["conv_eff_fp32"] = f["gemm_eff_fp32"]
    prov = {
        "created": datetime.date.today().isoformat(),
        "script": "scripts/calibration/calibrate_roofline.py",
        "sources": {
            "stage_a": "neusight_gemm_ops_fp32.csv.gz (sitar-lab/NeuSight 6945927d, MIT): PyTorch 2.1 cu121 FP32 linear/bmm kernel latency",
            "stage_b": "stas00_mamf_measured_matmul.csv (stas00/ml-engineering): maximum achievable bf16 matmul TFLOPS",
        },
        "stage_a": stage_a,
        "stage_b": stage_b_notes,
        "memory_roof": {"measured": roof, "borrowed_from_ampere": borrowed_roof,
                        "method": "p95 of achieved/peak bandwidth over NeuSight kernels 4x larger than L2 whose "
                                  "arithmetic intensity is below a quarter of the device's FP32 ridge point"},
        "blackwell": "kernel-level constants borrowed from hopper (no FP32 GEMM data)",
        "stage_c": "not run: conv efficiencies equal GEMM efficiencies and PyTorch eager's dispatch is the "
                   "kernel harnesses' per-op cost until scripts/calibration/calibrate_models.py fits them on whole models",
        "cpu": "not fitted: CPU constants are starting values until our CPU measurements exist",
    }
    # Pascal GPUs (in the catalog for HELP's and timm's measurements) have no rows in these sources.
    families["pascal"] = dict(families["volta"])
    prov["pascal"] = ("borrowed: volta's constants (no Pascal measurements in the fitted sources); Pascal has no "
                      "tensor cores, so its tensor efficiencies are never used")
    doc = constants_doc(families, runtimes, json.dumps(prov, sort_keys=True))
    write_constants(doc, OUT)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
