#!/usr/bin/env bash
# Refits the roofline predictor from scratch and rewrites its accuracy report, in one command:
#   stage A/B  kernels (NeuSight) and max achievable matmul (stas00)  -> scripts/calibration/calibrate_roofline.py
#   stage C    whole models (timm eager)                              -> scripts/calibration/calibrate_models.py
#   stage G    eager's CUDA context and workspace (our GPU rows)     -> scripts/calibration/calibrate_eager_gpu.py
#   stage H    CUDA graphs' issue time per kernel and per step (our   -> scripts/calibration/calibrate_cuda_graphs.py
#              torch.compile reduce-overhead rows)
#   stage D    power exponent (ML.ENERGY vLLM decoding)               -> scripts/calibration/calibrate_power.py
#   stage E    CPU family for onnxruntime (our data/measured rows)     -> scripts/calibration/calibrate_cpu.py
#   stage M    onnxruntime memory (peak RSS of our rows)               -> scripts/calibration/calibrate_ort_memory.py
#   stage W    the browser family and onnxruntime-web ("this device") -> scripts/calibration/calibrate_browser.py
#              (writes its own section of docs/accuracy.md and the family's uncertainty, which the report keeps)
#   stage P    the cpu-probed family: onnxruntime natively on a      -> scripts/calibration/calibrate_cpu_probe.py
#              probed CPU (`predict --device this-machine`; likewise its own section and uncertainty)
#   report     held-out accuracy (latency, power, energy) -> docs/accuracy.md, per-family uncertainty
#              -> weights/roofline.json (last: it scores every stage's constants, stage W's included)
# Needs ../shared/data/public, the model zoo (scripts/zoo/export_torchvision.py, scripts/zoo/transformers.py)
# and a native build (PERFCARD=path/to/perfcard runs the stages with another build's CLI).
# Then rebuild (scripts/build.sh) so the CLI and the wasm module embed the new constants, and retrain
# (scripts/retrain.sh: the learned files read the roofline's figures, and record their own on the probed CPUs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh --native-only >/dev/null
/usr/bin/python3 -m scripts.calibration.calibrate_roofline "$@"
/usr/bin/python3 -m scripts.calibration.calibrate_models
/usr/bin/python3 -m scripts.calibration.calibrate_eager_gpu --write
/usr/bin/python3 -m scripts.calibration.calibrate_cuda_graphs --write --update-doc >/dev/null
/usr/bin/python3 -m scripts.zoo.transformers --only "$(/usr/bin/python3 -m scripts.zoo.transformers --mlenergy-ids)" >/dev/null
/usr/bin/python3 -m scripts.calibration.calibrate_power
/usr/bin/python3 -m scripts.calibration.calibrate_cpu
/usr/bin/python3 -m scripts.calibration.calibrate_ort_memory --write
/usr/bin/python3 -m scripts.calibration.calibrate_browser >/dev/null
/usr/bin/python3 -m scripts.calibration.calibrate_cpu_probe >/dev/null
/usr/bin/python3 -m scripts.calibration.evaluate_roofline --write
