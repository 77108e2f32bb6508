#!/usr/bin/env bash
# Whether this clone reproduces every figure docs/accuracy.md commits, scoring the committed constants and
# weights on ../shared/data/public and data/measured (nothing is fitted, retrained or written; the zoo graphs
# the rows need are exported first, by each check's own ensure step):
#   roofline       scripts.calibration.evaluate_roofline --check       the roofline's report and uncertainty
#   learned        scripts.training.evaluate --check                   trees, GNN, transformer, ensemble, auto
#   memory         scripts.training.evaluate_memory --check            the memory model per protocol
#   training-time  scripts.training.evaluate_training_time --check     a training step's time
#   gpu-ours       scripts.calibration.evaluate_gpu_ours --check       our own GPU campaign's rows
#   cuda-graphs    scripts.calibration.calibrate_cuda_graphs --check   CUDA graphs (stage H)
#   cpu-machines   scripts.calibration.evaluate_cpu_machines --check   CPUs nothing was fitted on (and the learned
#                                                                      files' figures on probed CPUs)
#   ort-kernels    scripts.measure.kernel_profile --check              onnxruntime's kernels against the plan
# Each check's output goes to build/check_accuracy/<name>.log. Exit 1 naming the sections that differ (their
# logs say which figures). About 4 minutes on a 2-core machine whose zoo is whole; the first time, writing
# the graphs takes longer (hours for the whole zoo: `scripts.zoo.all` writes it, resumable).
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh --native-only >/dev/null || exit 1
mkdir -p build/check_accuracy
checks=(
  "roofline scripts.calibration.evaluate_roofline"
  "learned scripts.training.evaluate"
  "memory scripts.training.evaluate_memory"
  "training-time scripts.training.evaluate_training_time"
  "gpu-ours scripts.calibration.evaluate_gpu_ours"
  "cuda-graphs scripts.calibration.calibrate_cuda_graphs"
  "cpu-machines scripts.calibration.evaluate_cpu_machines"
  "ort-kernels scripts.measure.kernel_profile"
)
differ=()
for c in "${checks[@]}"; do
  name=${c%% *}
  module=${c#* }
  start=$SECONDS
  if /usr/bin/python3 -m "$module" --check >"build/check_accuracy/$name.log" 2>&1; then
    echo "check_accuracy: $name reproduces ($((SECONDS - start)) s)"
  else
    echo "check_accuracy: $name DIFFERS ($((SECONDS - start)) s): build/check_accuracy/$name.log"
    differ+=("$name")
  fi
done
if [ "${#differ[@]}" -gt 0 ]; then
  echo "check_accuracy: not reproduced: ${differ[*]}"
  exit 1
fi
echo "check_accuracy: every figure of docs/accuracy.md reproduces"
