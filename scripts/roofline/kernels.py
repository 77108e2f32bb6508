"""NeuSight's measured FP32 GEMM kernels as prediction queries, with one split shared by calibration
and evaluation (by shape, so a held-out shape is never fitted)."""
import hashlib
import os

import pandas as pd

from scripts import paths

PUBLIC = paths.SHARED_DATA

# NeuSight spellings -> catalog ids. Only exact parts, except V100: NeuSight measured the PCIe card
# (250 W, lower clocks) and the catalog holds the SXM2 one, so the fitted Volta efficiency is
# conservative for SXM2 by roughly the clock ratio; recorded in the provenance.
NEUSIGHT_DEVICES = {
    "NVIDIA A100-PCIE-40GB": ("a100-pcie-40gb", "ampere", ""),
    "NVIDIA A100 80GB PCIe": ("a100-pcie-80gb", "ampere", ""),
    "NVIDIA H100 80GB HBM3": ("h100-sxm5-80gb", "hopper", ""),
    "NVIDIA L4": ("l4", "ada", ""),
    "Tesla T4": ("t4", "turing", ""),
    "Tesla V100-PCIE-32GB": ("v100-sxm2-32gb", "volta", "measured on V100-PCIe-32GB, predicted with SXM2 specs"),
}


def split_of(key, test_fraction=0.2):
    h = int(hashlib.sha1(key.encode()).hexdigest()[:8], 16)
    return "test" if (h % 1000) < test_fraction * 1000 else "train"


def load_neusight(max_rows_per_device):
    """All rows of the catalog's devices, and a reproducible sample of them for the iterative fit."""
    df = pd.read_csv(os.path.join(PUBLIC, "neusight_gemm_ops_fp32.csv.gz"))
    df = df[df["device"].isin(NEUSIGHT_DEVICES)].copy()
    df["split"] = [split_of(f"{o}|{b}|{m}|{n}|{k}") for o, b, m, n, k in zip(df.op, df.B, df.M, df.N, df.K)]
    # Bounded per device so a fit stays minutes.
    parts = [g.sample(min(len(g), max_rows_per_device), random_state=0) for _, g in df.groupby(["device", "split"])]
    return df, pd.concat(parts, ignore_index=True)


def gemm_queries(rows, gemm_paths):
    qs = []
    for r in rows.itertuples():
        dev = NEUSIGHT_DEVICES[r.device][0]
        qs.append({"model": gemm_paths[r.op], "dims": {"B": int(r.B), "M": int(r.M), "N": int(r.N), "K": int(r.K)},
                   "device": dev, "precision": "fp32", "runtime": "pytorch-op"})
    return qs


