"""Device features for the training tables, read from PerfCard's catalog (weights/devices.json) only: a
device that is not in the catalog gets nulls here, never a guessed spec."""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Optional

from scripts import paths

CATALOG_JSON = Path(paths.DEVICES_JSON)

DEVICE_FEATURES = ["dev_peak_tflops", "dev_peak_fp32_tflops", "dev_bandwidth_gbs", "dev_l2_mb", "dev_units",
                   "dev_tdp_w", "dev_memory_gb"]

# The sources' precision -> the catalog's peak column. amp = fp16 autocast, amp_bf16 = bf16 autocast: the
# matmuls run at that precision. tf32 falls back to nothing when the catalog has no tf32 figure.
PEAK_KEY = {"fp32": "fp32", "tf32": "tf32", "fp16": "fp16", "amp": "fp16", "bf16": "bf16", "amp_bf16": "bf16",
            "fp8": "fp8", "int8": "int8"}


# scripts/data/devices.py ids that name a catalog part under another id (the catalog's `appears_in` lists
# HELP's 'raspi4' and ncnn's 'Raspberry Pi 4 Model B' for the first entry). The GPU aliases point devices.py's
# ids at the extra GPUs of weights/devices.json ("default_view": false): HELP's 'titanxp' (TITAN Xp), MLPerf's
# 'NVIDIA H100-NVL-94GB' and timm's 'pro6000maxq' (the 300 W Max-Q Workstation Edition; MLPerf's Server Edition,
# 'rtx-pro6000-bw-server', runs other clocks and power and is deliberately not aliased).
CATALOG_ALIASES = {
    "cpu-broadcom-bcm2711": "cpu-broadcom-bcm2711-raspberry-pi-4",
    "titan-xp": "titanxp",
    "h100-nvl-94gb": "h100-nvl",
    "rtx-pro6000-bw-maxq": "rtx-pro-6000-blackwell",
}


def canonical(device_id: Optional[str]) -> Optional[str]:
    """The catalog's id for a devices.py id (unchanged when it has no alias)."""
    if not isinstance(device_id, str):
        return None
    return CATALOG_ALIASES.get(device_id, device_id)


def _v(x):
    return x.get("value") if isinstance(x, dict) else x


@lru_cache(maxsize=1)
def catalog() -> dict[str, dict]:
    return {d["id"]: d for d in json.loads(CATALOG_JSON.read_text())["devices"]}


def in_catalog(device_id: Optional[str]) -> bool:
    return isinstance(device_id, str) and device_id in catalog()


def peak_tflops(d: dict, key: str) -> Optional[float]:
    if d.get("kind") == "cpu":
        # the catalog holds CPU peaks as fp32 GFLOPS only
        g = _v(d.get("peak_fp32_gflops"))
        return g / 1000.0 if key == "fp32" and g is not None else None
    return _v((d.get("peak_tflops") or {}).get(key))


@lru_cache(maxsize=None)
def features(device_id: Optional[str], precision: Optional[str]) -> dict:
    d = catalog().get(device_id) if isinstance(device_id, str) else None
    if d is None:
        return {k: None for k in DEVICE_FEATURES} | {"dev_kind_catalog": None}
    key = PEAK_KEY.get(precision) if isinstance(precision, str) else None
    units = _v(d.get("sm_count")) if d.get("kind") != "cpu" else _v(d.get("cores"))
    return {
        "dev_peak_tflops": peak_tflops(d, key) if key else None,
        "dev_peak_fp32_tflops": peak_tflops(d, "fp32"),
        "dev_bandwidth_gbs": _v(d.get("memory_bandwidth_gbs")),
        "dev_l2_mb": _v(d.get("l2_mb")),
        "dev_units": units,
        "dev_tdp_w": _v(d.get("tdp_w")),
        "dev_memory_gb": _v(d.get("memory_gb")),
        "dev_kind_catalog": d.get("kind"),
    }
