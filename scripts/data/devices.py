"""Device spellings found in the public sources -> PerfCard canonical device ids.

``resolve(raw, want=None, source=None)`` returns a ``Resolution``:

* ``device_id`` -- the canonical id, or ``None``. An id is only given when the spelling (or the
  record it came from) names the exact part: for families sold in several variants (A100 40/80 GB,
  SXM/PCIe; V100 16/32 GB, SXM2/SXM3/PCIe; H100 SXM/PCIe/NVL; H200 SXM/NVL; GH200 96/144 GB) both
  memory and form factor must be present. Otherwise ``device_id`` is ``None`` and ``family`` still
  says what chip it is (``status='family_only'``). Nothing is guessed.
* ``family`` -- chip family (``a100``, ``v100``, ``h100``, ``rtx4090``, ``cpu`` ...), or ``None``.
* ``kind`` -- ``gpu`` | ``cpu`` | ``soc`` (Jetson modules) | ``accelerator`` | ``None``.
* ``status`` -- ``mapped`` | ``family_only`` | ``ambiguous`` | ``out_of_scope`` | ``unknown``.
* ``reason`` -- why it is not mapped (empty when mapped).
* ``mig`` -- MIG profile found in the spelling (``'1x1g.10gb'``), else ``None``; the device_id is then
  the parent GPU, so filter ``mig.isna()`` for whole-GPU rows.
* ``virtual`` -- the spelling names a vGPU profile / virtualised GPU (e.g. ``A10-24Q``, ``H100-80C``).

``in_catalog(id)`` says whether PerfCard's device catalog (the devices in
``../shared/data/public/device_specs.csv``) has the part. Known parts outside the catalog keep a
stable id (``a40``, ``a30``, ``v100-sxm2-16gb``, ``v100-pcie-32gb`` ...) so their rows are not lost.

Source-specific facts (e.g. TensorRT-LLM's perf page states "H100 SXM 80GB (DGX H100)") live in
``SOURCE_CONTEXT`` with the evidence next to them; they are applied only for that source.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

# --------------------------------------------------------------------------------------------
# Catalog: the parts in device_specs.csv (PerfCard's device catalog). id -> device_specs name.
# --------------------------------------------------------------------------------------------
CATALOG: dict[str, str] = {
    "a100-sxm4-40gb": "A100-40GB-SXM4",
    "a100-sxm4-80gb": "A100-80GB-SXM4",
    "a100-pcie-80gb": "A100-80GB-PCIe",
    "h100-sxm5-80gb": "H100-SXM5-80GB",
    "h100-pcie-80gb": "H100-PCIe-80GB",
    "h200-sxm-141gb": "H200-SXM-141GB",
    "b200-sxm-180gb": "B200-HGX",
    "v100-sxm2-32gb": "V100-SXM2-16/32GB",
    "l4": "L4",
    "t4": "T4",
    "a10": "A10",
    "l40s": "L40S",
    "rtx3090": "RTX-3090",
    "rtx4090": "RTX-4090",
    "apple-m1": "Apple-M1 (8-core GPU)",
    "apple-m1-max": "Apple-M1-Max (32-core GPU)",
}

# Known parts that are NOT in device_specs.csv but keep a stable id (listed so docs/summary can say so). Several
# of them are in weights/devices.json (the predictor's catalog; scripts/data/catalog_features.py reads it).
NOT_IN_CATALOG_NOTES: dict[str, str] = {
    "v100-sxm2-16gb": "same GV100 SXM2 board as the catalog's v100-sxm2-32gb with 16 GB; not in catalog yet",
    "v100-pcie-32gb": "GV100 PCIe (250 W, lower clocks than SXM2); in weights/devices.json (extra GPU), not in device_specs.csv",
    "v100-pcie-16gb": "GV100 PCIe 16 GB; in weights/devices.json (extra GPU), not in device_specs.csv",
    "v100-sxm3-32gb": "DGX-2/DGX-2H V100 (SXM3, 350/450 W); not in catalog yet",
    "a100-pcie-40gb": "A100 PCIe 40 GB (1555 GB/s, 250 W); in weights/devices.json, not in device_specs.csv",
    "a30": "in weights/devices.json, not in device_specs.csv",
    "a40": "in weights/devices.json (extra GPU), not in device_specs.csv",
}

_GPU_FAMILY_OF = {  # id prefix -> family, for ids produced by the rules below
    "a100": "a100", "h100": "h100", "h200": "h200", "gh200": "gh200", "b200": "b200", "v100": "v100",
}


@dataclass(frozen=True)
class Resolution:
    device_id: Optional[str]
    family: Optional[str]
    kind: Optional[str]
    status: str
    reason: str = ""
    mig: Optional[str] = None
    virtual: bool = False

    @property
    def in_catalog(self) -> bool:
        return self.device_id in CATALOG


def in_catalog(device_id: Optional[str]) -> bool:
    return device_id in CATALOG


def kind_of(device_id: Optional[str]) -> Optional[str]:
    if device_id is None:
        return None
    if device_id.startswith("cpu-"):
        return "cpu"
    if device_id.startswith("jetson-"):
        return "soc"
    if device_id.split("-")[0] in ("mi300x", "mi325x", "mi355x", "gaudi2", "gaudi3", "qaic"):
        return "accelerator"
    return "gpu"


# --------------------------------------------------------------------------------------------
# Source-specific context: (source, raw spelling) -> (device_id, evidence). Applied before rules.
# --------------------------------------------------------------------------------------------
SOURCE_CONTEXT: dict[tuple[str, str], tuple[str, str]] = {
    # TensorRT-LLM docs/source/performance/perf-overview.md, "Hardware" section at the pinned commit:
    # "H100 SXM 80GB (DGX H100), H200 SXM 141GB (DGX H200), B200 180GB (DGX B200), GB200 192GB (GB200 NVL72)".
    ("trtllm_perf_overview", "H100"): ("h100-sxm5-80gb", "perf-overview.md: 'H100 SXM 80GB (DGX H100)'"),
    ("trtllm_perf_overview", "H200"): ("h200-sxm-141gb", "perf-overview.md: 'H200 SXM 141GB (DGX H200)'"),
    ("trtllm_perf_overview", "B200"): ("b200-sxm-180gb", "perf-overview.md: 'B200 180GB (DGX B200)'"),
    ("trtllm_perf_overview", "GB200"): ("gb200", "perf-overview.md: 'GB200 192GB (GB200 NVL72)'"),
    # ML.ENERGY v3 (ml-energy/benchmark v3.0): gpu_model 'H100' / 'B200'. The same group's v2 data names the
    # H100 'NVIDIA H100 80GB HBM3' (nvidia-smi name of the SXM5 part; PCIe H100 is HBM2e) and v3 runs
    # 8-GPU NVLink TP=8 configurations (HGX/DGX). B200 exists only as the SXM (HGX/DGX) part.
    ("mlenergy_v3", "H100"): ("h100-sxm5-80gb", "v2 names it 'NVIDIA H100 80GB HBM3' (SXM5); v3 uses TP up to 8 (HGX)"),
    ("mlenergy_v3", "B200"): ("b200-sxm-180gb", "B200 is only sold as the SXM (HGX/DGX) part"),
    # Ultralytics docs: "Speed averaged over COCO val images using an Amazon EC2 P4d instance. CPU speeds
    # measured with ONNX export". AWS p4d.24xlarge host CPU: Intel Xeon Platinum 8275CL (Cascade Lake).
    ("ultralytics_yolo11_t4", "Amazon EC2 P4d CPU"): (
        "cpu-intel-xeon-platinum-8275cl", "ultralytics docs: CPU speed on an Amazon EC2 P4d instance (host CPU Xeon Platinum 8275CL); thread count not stated"),
}


def _norm(s: str) -> str:
    s = s.lower()
    s = s.replace("®", " ").replace("™", " ").replace("(tm)", " ").replace("(r)", " ").replace("‑", "-")
    s = re.sub(r"[_/,()\[\]:;*]", " ", s)
    s = re.sub(r"(?<=[a-z0-9])-(?=[a-z0-9])", " ", s)
    s = re.sub(r"\s+", " ", s).strip()
    return s


def _mem_gb(n: str) -> Optional[int]:
    m = re.findall(r"(?<![\d.])(\d{2,3})\s?g(?:b|ib|i)?\b", n)
    vals = {int(x) for x in m if int(x) in (16, 24, 32, 40, 48, 64, 80, 94, 96, 140, 141, 144, 180, 186, 192)}
    return vals.pop() if len(vals) == 1 else None


# ---- GPU rules -------------------------------------------------------------------------------------
def _a100(n: str, mig: Optional[str] = None):
    mem = _mem_gb(n)
    if mem is None and mig:
        # MIG profile sizes are fixed per part: 1g.5gb exists only on A100 40GB, 1g.10gb only on A100 80GB
        m = re.search(r"\dg\.(5|10|20|40)gb", mig)
        mem = {"5": 40, "10": 80}.get(m.group(1)) if m else None
    if mem is None:
        m = re.search(r"\b(40|80)c\b", n)  # vGPU profile names the full frame buffer (A100-SXM-80C)
        mem = int(m.group(1)) if m else None
    if re.search(r"\bdrive\b", n):
        return None, "DRIVE A100 (automotive PCIe board); memory not stated"
    form = None
    if re.search(r"\bsxm4?\b|\bdgx\b|\bhgx\b", n):
        form = "sxm4"
    elif re.search(r"\bpcie\b|\bpci\b", n):
        form = "pcie"
    if mem not in (40, 80):
        return None, "A100 memory (40/80 GB) not stated"
    if form is None:
        return None, "A100 form factor (SXM4/PCIe) not stated"
    return f"a100-{form}-{mem}gb", ""


def _v100(n: str):
    if re.search(r"\bv100s\b", n):
        return "v100s-pcie-32gb", ""
    mem = _mem_gb(n)
    if mem is None:
        m = re.search(r"\b(16|32)\s?g\b", n)
        mem = int(m.group(1)) if m else None
    form = None
    if re.search(r"\bdgx ?2h?\b|\bsxm3\b", n):
        form = "sxm3"
    elif re.search(r"\bdgx ?1v?\b|\bsxm2?\b", n):
        form = "sxm2"
    elif re.search(r"\bpcie\b", n):
        form = "pcie"
    if mem not in (16, 32):
        return None, "V100 memory (16/32 GB) not stated"
    if form is None:
        return None, "V100 form factor (SXM2/SXM3/PCIe) not stated"
    if form == "sxm3" and mem != 32:
        return None, "DGX-2 with 16 GB V100 is inconsistent (DGX-2 ships SXM3 32 GB)"
    return f"v100-{form}-{mem}gb", ""


def _h100(n: str):
    if re.search(r"\bnvl\b", n):
        return "h100-nvl-94gb", ""
    if re.search(r"\bpcie\b", n):
        return "h100-pcie-80gb", ""
    if re.search(r"\bsxm5?\b|\bhbm3\b|\bdgx\b|\bhgx\b", n):
        return "h100-sxm5-80gb", ""
    return None, "H100 form factor (SXM5/PCIe/NVL) not stated"


def _h200(n: str):
    if re.search(r"\bnvl\b", n):
        return "h200-nvl-141gb", ""
    if re.search(r"\bsxm5?\b|\bdgx\b|\bhgx\b", n):
        return "h200-sxm-141gb", ""
    return None, "H200 form factor (SXM/NVL) not stated"


def _gh200(n: str):
    mem = _mem_gb(n)
    if mem in (96, 144):
        return f"gh200-{mem}gb", ""
    return None, "GH200 memory (96/144 GB HBM) not stated"


_GEFORCE = {  # normalized number (+ suffix) -> id
    "1050 ti": "gtx1050ti", "1080 ti": "gtx1080ti", "1080ti": "gtx1080ti",
    "2060": "rtx2060", "2080": "rtx2080", "2080 ti": "rtx2080ti", "2080ti": "rtx2080ti",
    "3060 ti": "rtx3060ti", "3070": "rtx3070", "3080 ti": "rtx3080ti",
    "3090": "rtx3090", "4070 ti": "rtx4070ti", "4080": "rtx4080", "4090": "rtx4090", "5090": "rtx5090",
}

# (regex on normalized spelling, id or callable, family). First match wins; order matters.
_GPU_RULES: list = [
    (r"\bgh200\b", _gh200, "gh200"),
    (r"\bgb300\b", "gb300", "gb300"),
    (r"\bgb200\b", "gb200", "gb200"),
    (r"\bb300\b", "b300-sxm", "b300"),
    (r"\bb200\b", "b200-sxm-180gb", "b200"),
    (r"\bh200\b", _h200, "h200"),
    (r"\bh100\b", _h100, "h100"),
    (r"\ba100\b", _a100, "a100"),
    (r"\bv100s?\b", _v100, "v100"),
    (r"\bp100 pcie 16gb\b", "p100-pcie-16gb", "p100"),
    (r"\btesla p4\b", "p4", "p4"),
    (r"\bk80\b", "k80", "k80"),
    (r"\bl40s\b", "l40s", "l40s"),
    (r"\bl40\b", "l40", "l40"),
    (r"\bl4\b", "l4", "l4"),
    (r"\bt4\b", "t4", "t4"),
    (r"\ba10g\b", "a10g", "a10g"),
    (r"\ba10\b", "a10", "a10"),
    (r"\ba16\b", "a16", "a16"),
    (r"\ba30\b", "a30", "a30"),
    (r"\ba40\b", "a40", "a40"),
    (r"\ba2\b", "a2", "a2"),
    (r"\brtx pro 6000 blackwell server\b", "rtx-pro6000-bw-server", "rtx-pro6000-bw"),
    (r"\bpro6000 ?max ?q\b|\brtx pro 6000 blackwell max ?q\b", "rtx-pro6000-bw-maxq", "rtx-pro6000-bw"),
    (r"\brtx 6000 ada\b", "rtx6000-ada", "rtx6000-ada"),
    (r"\brtx 5000 ada\b", "rtx5000-ada", "rtx5000-ada"),
    (r"\brtx 4000 ada\b", "rtx4000-ada", "rtx4000-ada"),
    (r"\brtx 2000e ada\b", "rtx2000e-ada", "rtx2000e-ada"),
    (r"\brtx a6000\b", "rtx-a6000", "rtx-a6000"),
    (r"\brtx a5000\b", "rtx-a5000", "rtx-a5000"),
    (r"\brtx a3000\b.*\bnotebook\b|\brtx a3000 laptop\b", "rtx-a3000-laptop", "rtx-a3000"),
    (r"\bquadro rtx 8000\b", "quadro-rtx8000", "quadro-rtx8000"),
    (r"\bquadro rtx 6000\b", "quadro-rtx6000", "quadro-rtx6000"),
    (r"\btitan ?rtx\b", "titan-rtx", "titan-rtx"),
    (r"\btitan ?v\b", "titan-v", "titan-v"),
    (r"\btitan ?xp\b", "titan-xp", "titan-xp"),
    (r"\btitan ?x pascal\b", "titanx-pascal", "titan-x"),  # nvidia-smi's name for the 2016 card: 'TITAN X (Pascal)'
    (r"\btitan ?x\b", None, "titan-x"),  # GTX TITAN X (Maxwell) vs TITAN X (Pascal): ambiguous
    (r"\brtx 3070 laptop\b", "rtx3070-laptop", "rtx3070"),
    (r"\brtx ?2060\b.*\bnotebook\b", "rtx2060-laptop", "rtx2060"),
    (r"\b3080 10gb\b", "rtx3080-10gb", "rtx3080"),
    (r"\b(?:rtx|gtx)? ?(1050 ti|1080 ?ti|2060|2080 ?ti|2080|3060 ti|3070|3080 ti|3090|4070 ti|4080|4090|5090)\b",
     "_geforce", "geforce"),
    (r"\bradeon rx 6900 xt\b", "rx6900xt", "rx6900xt"),
    (r"\bradeon pro 555x\b", "radeon-pro-555x", "radeon-pro-555x"),
    (r"\buhd graphics 770\b", "intel-uhd770", "intel-uhd770"),
    (r"\bmi355x\b", "mi355x", "mi355x"),
    (r"\bmi325x\b", "mi325x", "mi325x"),
    (r"\bmi300x\b", "mi300x", "mi300x"),
    (r"\bgaudi ?3\b", "gaudi3", "gaudi3"),
    (r"\bgaudi ?2\b", "gaudi2", "gaudi2"),
    # Jetson modules (SoC: CPU + iGPU); GPU rows get jetson-*, CPU rows cpu-nvidia-jetson-*.
    (r"\bjetson agx thor\b", "jetson-agx-thor", "jetson"),
    (r"\bjetson agx orin\b|\bagx orin\b", "jetson-agx-orin", "jetson"),
    (r"\borin nano\b", "jetson-orin-nano", "jetson"),
    (r"\borin nx\b", "jetson-orin-nx", "jetson"),
    (r"^nvidia orin$", None, "jetson"),  # AGX Orin vs Orin NX vs Orin Nano not stated
    (r"\bxavier nx\b", "jetson-xavier-nx", "jetson"),
    (r"\bagx xavier\b|\bjetson agx xavier\b", "jetson-agx-xavier", "jetson"),
    (r"^nvidia xavier$", None, "jetson"),  # AGX Xavier vs Xavier NX not stated
    (r"\bjetson tx2 nx\b", "jetson-tx2-nx", "jetson"),
    (r"\bjetson nano\b", "jetson-nano", "jetson"),
]

# Apple GPUs as named by llama.cpp tables (GPU core counts matter: M1 ships with 7- and 8-core GPUs).
_APPLE_GPU = [
    (r"\bm1 max 32 core gpu\b", "apple-m1-max"),
    (r"\bm1 7 core gpu\b", "apple-m1-7gpu"),
    (r"\bm2 ultra 76 core gpu\b", "apple-m2-ultra-76gpu"),
    (r"\bm3 max 40 core gpu\b", "apple-m3-max-40gpu"),
    (r"\bmacbook pro 13 inch m1 2020\b", "apple-m1"),  # 13-inch M1 MacBook Pro: 8-core GPU only
]

# Out-of-scope hardware we recognise (not GPUs/CPUs PerfCard predicts): reason only.
_OUT_OF_SCOPE = [
    (r"\bqualcomm cloud ai 100\b|\bqaic\b", "Qualcomm Cloud AI 100 accelerator"),
    (r"\bmali\b|\badreno\b|\bpowervr\b|\bvideocore\b|\bimmortalis\b|\bvega 8\b", "integrated SoC GPU"),
    (r"\bxilinx\b|\balveo\b|\bvck5000\b|\bfpga\b|\bu250\b|\bu280\b", "FPGA"),
    (r"\btpu\b|\binferentia\b|\bwarboy\b|\bspeedai\b|\bmoffett\b|\bsapeon\b|\brecaccel\b|\brbln\b|\bbr104\b|"
     r"\bcentaur\b|\bneuchips\b|\bcoral\b|\bnpu\b|\bmlsoc\b|\bdna f200\b|\biva fpga\b|\barc pro b60\b|\barc 140t\b|"
     r"\beyeriss\b|\btensorflow metal\b|\buntetherai\b|\bspeedai\d*\b", "non-GPU accelerator / unsupported device"),
    (r"^(pixel ?\d|samsung|essential|galaxy)", "phone (SoC / regional variant not stated)"),
]


# ---- CPU rules -------------------------------------------------------------------------------------
_XEON_TIER = {"8": "platinum", "9": "platinum", "6": "gold", "5": "gold", "4": "silver", "3": "bronze"}


def _cpu(n: str) -> tuple[Optional[str], str]:
    m = re.search(r"\bxeon phi (\d{4}[a-z]?)\b", n)
    if m:
        return f"cpu-intel-xeon-phi-{m.group(1)}", ""
    m = re.search(r"\b(?:(platinum|gold|silver|bronze) )?(\d{4}[a-z]{0,2})(\+)?(?= |$)", n) if (
        "xeon" in n or re.match(r"^(gold|silver|platinum|bronze) \d{4}", n)) else None
    if m and (m.group(1) or re.match(r"^[3-9]\d{3}[a-z]{0,2}$", m.group(2))):
        num = m.group(2)
        if re.match(r"^\d{4}[pe]$", num) and not m.group(1):  # Xeon 6 (6787P, 6980P): no metal tier
            return f"cpu-intel-xeon-{num}", ""
        tier = _XEON_TIER.get(num[0])
        if tier:
            return f"cpu-intel-xeon-{tier}-{num}{'plus' if m.group(3) else ''}", ""
    m = re.search(r"\bxeon.*\be5 ?(\d{4}) v(\d)\b", n)
    if m:
        return f"cpu-intel-xeon-e5-{m.group(1)}-v{m.group(2)}", ""
    m = re.search(r"\bxeon.*\bw(\d) (\d{4}[a-z]?)\b", n)
    if m:
        return f"cpu-intel-xeon-w{m.group(1)}-{m.group(2)}", ""
    if "xeon" in n:
        return None, "Xeon without a model number"
    m = re.search(r"\b(i[3579]) (\d{4,5}[a-z]{0,2})\b", n)
    if m:
        return f"cpu-intel-core-{m.group(1)}-{m.group(2)}", ""
    m = re.search(r"\bcore ultra ([3579]) (?:processor )?(\d{3}[a-z]{0,2})\b", n)
    if m:
        return f"cpu-intel-core-ultra-{m.group(1)}-{m.group(2)}", ""
    if re.search(r"\bcore i[3579]\b", n):
        return None, "Intel Core without a model number"
    if re.search(r"\bepyc \d{4} series\b", n):
        return None, "EPYC series only, no model number"
    m = re.search(r"\bceleron (n\d{4}|m \d{3})\b", n)
    if m:
        return f"cpu-intel-celeron-{m.group(1).replace(' ', '-')}", ""
    m = re.search(r"\batom (x\d) (z\d{4})\b", n)
    if m:
        return f"cpu-intel-atom-{m.group(1)}-{m.group(2)}", ""
    m = re.search(r"\bepyc (\d{4}[a-z]?)\b(?! series)", n)
    if m:
        return f"cpu-amd-epyc-{m.group(1)}", ""
    m = re.search(r"\bryzen threadripper (\d{4}[a-z]{0,2})\b", n)
    if m:
        return f"cpu-amd-ryzen-threadripper-{m.group(1)}", ""
    m = re.search(r"\bryzen embedded ([a-z]\d{4}[a-z]?)\b", n)
    if m:
        return f"cpu-amd-ryzen-embedded-{m.group(1)}", ""
    m = re.search(r"\bryzen ([3579]) (\d{4}[a-z]{0,2})\b", n)
    if m:
        return f"cpu-amd-ryzen-{m.group(1)}-{m.group(2)}", ""
    m = re.search(r"\bryzen (5700g)\b", n)  # the Ryzen 5700G is only sold as 'Ryzen 7 5700G'
    if m:
        return "cpu-amd-ryzen-7-5700g", ""
    m = re.search(r"\bapple (m\d)(?: (pro|max|ultra))?\b|\b(m\d), 20\d\d\b|\b(m\d) 20\d\d\b", n)
    if m:
        chip = m.group(1) or m.group(3) or m.group(4)
        return f"cpu-apple-{chip}{'-' + m.group(2) if m.group(2) else ''}", ""
    m = re.search(r"\bapple (a\d{1,2})\b", n)
    if m:
        return f"cpu-apple-{m.group(1)}", ""
    # Jetson CPU complexes
    for pat, jid in ((r"\bjetson agx orin\b", "agx-orin"), (r"\bjetson orin nano\b", "orin-nano"),
                     (r"\bjetson agx xavier\b", "agx-xavier"), (r"\bjetson tx2 nx\b", "tx2-nx"),
                     (r"\bjetson nano\b", "nano")):
        if re.search(pat, n):
            return f"cpu-nvidia-jetson-{jid}", ""
    # Arm / RISC-V / other SoCs named by part number
    if re.search(r"\bbcm2835\b.*\bcortex a72\b", n):
        # Raspberry Pi 4 kernels report 'BCM2835'; the Cortex-A72 SoC of the Pi 4 is the BCM2711.
        return "cpu-broadcom-bcm2711", ""
    soc_rules = [
        (r"\bbcm ?(2[78]\d\d)(?:[a-z]\d)?\b", "broadcom-bcm{0}"),
        (r"\brk ?(\d{4}[sh]?)\b", "rockchip-rk{0}"),
        (r"\bamlogic (s\d{3}x?|a\d{3}d\d?)\b", "amlogic-{0}"),
        (r"\ballwinner (h\d{1,3}\+?|t\d{3})\b", "allwinner-{0}"),
        (r"\bsnapdragon (8 gen \d|x elite|\d{3}\+?g?)", "qualcomm-snapdragon-{0}"),
        (r"\bqrb ?(\d{4})\b", "qualcomm-qrb{0}"),
        (r"\bdimensity (\d{4})\b", "mediatek-dimensity-{0}"),
        (r"\bkirin (\d{3})\b", "hisilicon-kirin-{0}"),
        (r"\bhi ?(3519v\d{3})\b", "hisilicon-hi{0}"),
        (r"\bkunpeng 920 (\d{4}k?)\b", "huawei-kunpeng-920-{0}"),
        (r"\bphytium (ft 2000\+ 64|ft 2000 4)\b", "phytium-{0}"),
        (r"\bphytium (e2000)\b", "phytium-{0}"),
        (r"\bloongson (\d[a-z]\d{4}[a-z]{0,2})\b", "loongson-{0}"),
        (r"\bsunway (sw\d{3})\b", "sunway-{0}"),
        (r"\bth1520\b", "thead-th1520"),
        (r"\bjh7110\b", "starfive-jh7110"),
        (r"\bspacemit (m1|k1)\b", "spacemit-{0}"),
        (r"\bsg2000\b", "sophgo-sg2000"),
        (r"\baxera (ax\d{3}[a-z])\b", "axera-{0}"),
        (r"\bingenic (t\d{2}[a-z]*)\b", "ingenic-{0}"),
        (r"\brz ?g2l\b", "renesas-rzg2l"),
        (r"\bi\.?mx7 dual\b", "nxp-imx7d"),
        (r"\bxc7z020", "xilinx-zynq-7020"),
        (r"\byitian (\d{3})\b", "alibaba-yitian-{0}"),
    ]
    for pat, tmpl in soc_rules:
        m = re.search(pat, n)
        if m:
            parts = [g.replace("+", "plus").replace(" ", "-") for g in m.groups()]
            return "cpu-" + tmpl.format(*parts), ""
    if re.search(r"\bcortex\b|\bneoverse\b|\bcarmel\b|\barmv8\b|\bgs\d{3}\b", n):
        return None, "CPU core type only; the SoC/product is not named"
    if re.search(r"\baws\b|\bazure\b|\bec2\b|\binstance\b", n):
        return None, "cloud instance type; CPU model not stated"
    return None, "unrecognised CPU spelling"


_CPU_HINT = re.compile(r"\b(intel|xeon|core i[3579]|i[3579] \d{4,5}[a-z]{0,2}|ryzen|epyc|threadripper|celeron|atom|cortex|"
                       r"arm|armv8|neoverse|carmel|apple|macbook|iphone|rockchip|rk\d{4}|amlogic|allwinner|broadcom|"
                       r"bcm\d|snapdragon|qualcomm|mediatek|kirin|kunpeng|phytium|loongson|sunway|risc|jh7110|"
                       r"th1520|spacemit|sg2000|axera|ingenic|renesas|freescale|raspberry|odroid|yitian|cpu|"
                       r"gold \d{4}|silver \d{4}|platinum|bronze \d{4})\b")


def _resolve_gpu(n: str, mig: Optional[str] = None) -> tuple[Optional[str], Optional[str], str]:
    """Return (id, family, reason) or (None, None, '') when no GPU rule matched."""
    for pat, aid in _APPLE_GPU:
        if re.search(pat, n):
            return aid, "apple-gpu", ""
    hits = []
    for pat, target, fam in _GPU_RULES:
        m = re.search(pat, n)
        if not m:
            continue
        if target is _a100:
            gid, why = _a100(n, mig)
        elif callable(target):
            gid, why = target(n)
        elif target == "_geforce":
            key = m.group(1).replace("ti", " ti").replace("  ", " ").strip()
            gid, why = _GEFORCE.get(key) or _GEFORCE.get(m.group(1)), ""
            fam = gid
        else:
            gid, why = target, ("" if target else "variant not stated (ambiguous spelling)")
        hits.append((gid, fam if fam != "geforce" else gid, why))
        break
    if not hits:
        return None, None, ""
    return hits[0]


@lru_cache(maxsize=None)
def resolve(raw: Optional[str], want: Optional[str] = None, source: Optional[str] = None) -> Resolution:
    """Map one spelling. ``want`` = 'gpu' | 'cpu' | None (auto) picks which device of a mixed
    description (e.g. an ncnn board 'SoC (CPU cores + GPU)') is meant. ``source`` enables
    SOURCE_CONTEXT facts for that source only."""
    if raw is None or (isinstance(raw, float)) or str(raw).strip() in ("", "-", "nan", "None"):
        return Resolution(None, None, None, "unknown", "no device given")
    raw = str(raw).strip()
    if source is not None and (source, raw) in SOURCE_CONTEXT:
        did, _ = SOURCE_CONTEXT[(source, raw)]
        return Resolution(did, _family(did), kind_of(did), "mapped")
    if re.search(r"nodes?\s*:.*,.*nodes?\s*:|\(x\d+\).*,.*\(x\d+\)", raw, flags=re.I):
        return Resolution(None, None, "gpu", "ambiguous", "heterogeneous system (several accelerator types / node groups)")
    n = _norm(raw)
    mig = None
    m = re.search(r"\b(\d+x\d+g\.\d+gb) mig\b", n)
    if m:
        mig = m.group(1)
        n = n.replace(m.group(0), " ")
    virtual = bool(re.search(r"\bvirtualized\b|\bgrid\b|\b\d+q\b|\b\d+c\b", n))
    for pat, why in _OUT_OF_SCOPE:
        if re.search(pat, n) and want != "cpu":
            # a board description may name an iGPU and a CPU; only the GPU side is out of scope
            if want == "gpu" or not _CPU_HINT.search(n):
                return Resolution(None, None, None, "out_of_scope", why, mig, virtual)
    looks_cpu = bool(_CPU_HINT.search(n))
    if want != "cpu":
        gid, fam, why = _resolve_gpu(n, mig)
        if fam is not None or gid is not None:
            if want is None and looks_cpu and gid is None and fam == "jetson":
                pass  # e.g. 'NVIDIA Carmel' host CPU: fall through to CPU rules
            elif gid is None:
                return Resolution(None, fam, "gpu", "family_only", why, mig, virtual)
            else:
                return Resolution(gid, fam or _family(gid), kind_of(gid), "mapped", "", mig, virtual)
        if want == "gpu":
            return Resolution(None, None, "gpu", "unknown", "no known GPU named", mig, virtual)
    if want == "cpu" or looks_cpu:
        cid, why = _cpu(n)
        if cid:
            return Resolution(cid, "cpu", "cpu", "mapped", "", None, virtual)
        return Resolution(None, "cpu", "cpu", "family_only" if "xeon" in n or "core" in n else "unknown", why)
    return Resolution(None, None, None, "unknown", "unrecognised spelling", mig, virtual)


def _family(device_id: Optional[str]) -> Optional[str]:
    if device_id is None:
        return None
    if device_id.startswith("cpu-"):
        return "cpu"
    if device_id.startswith("jetson-"):
        return "jetson"
    if device_id.startswith("apple-"):
        return "apple-gpu"
    head = device_id.split("-")[0]
    return _GPU_FAMILY_OF.get(head, head)


def map_device(raw: Optional[str], want: Optional[str] = None, source: Optional[str] = None) -> Optional[str]:
    """Convenience: the canonical id or None."""
    return resolve(raw, want, source).device_id


# Spellings from the brief and the sources that must keep mapping this way (checked by the tests).
EXAMPLES: dict[str, Optional[str]] = {
    "NVIDIA A100-SXM4-40GB": "a100-sxm4-40gb",
    "A100 80GB PCIe": "a100-pcie-80gb",
    "NVIDIA A100 80GB PCIe": "a100-pcie-80gb",
    "NVIDIA A100-PCIE-40GB": "a100-pcie-40gb",
    "A100-80GB": None,  # form factor not stated
    "A100 SXM 80GB": "a100-sxm4-80gb",
    "NVIDIA A100-SXM-80GB (1x1g.10gb MIG)": "a100-sxm4-80gb",
    "H100 SXM": "h100-sxm5-80gb",
    "NVIDIA H100 80GB HBM3": "h100-sxm5-80gb",
    "H100 80GB PCIe Gen5": "h100-pcie-80gb",
    "NVIDIA H100-NVL-94GB": "h100-nvl-94gb",
    "NVIDIA H200-SXM-141GB": "h200-sxm-141gb",
    "NVIDIA B200-SXM-180GB": "b200-sxm-180gb",
    "Tesla V100-SXM2-32GB": "v100-sxm2-32gb",
    "V100-PCIE-32GB": "v100-pcie-32gb",
    "Tesla V100-PCIE-32GB": "v100-pcie-32gb",
    "NVIDIA DGX-1 (1x V100 16GB)": "v100-sxm2-16gb",
    "NVIDIA DGX-2 (16x V100 32GB)": "v100-sxm3-32gb",
    "T4": "t4",
    "Tesla T4": "t4",
    "NVIDIA L4": "l4",
    "RTX 3090": "rtx3090",
    "rtx3090": "rtx3090",
    "GeForce RTX 4090": "rtx4090",
    "NVIDIA GeForce RTX 4090 (Ada Lovelace)": "rtx4090",
    "4090": "rtx4090",
    "A40": "a40",
    "NVIDIA A30": "a30",
    "NVIDIA A10": "a10",
    "L40S 48GB": "l40s",
    "i9_10940x": "cpu-intel-core-i9-10940x",
    "13th Gen Intel(R) Core(TM) i9-13900K": "cpu-intel-core-i9-13900k",
    "Intel(R) Xeon(R) Platinum 8480+": "cpu-intel-xeon-platinum-8480plus",
    "AMD EPYC 7742 (2.25GHz) ubuntu 22.04 AOCC_4.2.0-Build#89": "cpu-amd-epyc-7742",
    "gold_6226": "cpu-intel-xeon-gold-6226",
    "titanx": None,
    "TITAN X (Pascal)": "titanx-pascal",
    "TITAN Xp": "titan-xp",
    "NVIDIA TITAN V": "titan-v",
    "TITAN RTX": "titan-rtx",
    "GeForce GTX 1080 Ti": "gtx1080ti",
    "GeForce RTX 2080 Ti": "rtx2080ti",
    "Tesla P100-PCIE-16GB": "p100-pcie-16gb",
    "Tesla P4": "p4",
    "RTX 6000 Ada": "rtx6000-ada",
    "RTX A6000": "rtx-a6000",
    "5090": "rtx5090",
    "pro6000maxq": "rtx-pro6000-bw-maxq",
    "NVIDIA A100 SXM": None,
    "a100": None,
}
