#!/usr/bin/env bash
# One device call of the GPU campaign (issue 15), prepared so that a lent GPU's minutes go to measuring:
#   bash scripts/measure/gpu_lease.sh [MINUTES] [PHASE=SHARE ...]
# run through the device tool (it sets $OUT, the folder whose files come back), e.g. with timeout_s 590:
#   bash scripts/measure/gpu_lease.sh 8.5                       # first 0.35, compile 0.30, sweep 0.35
#   bash scripts/measure/gpu_lease.sh 3.5 sweep=1               # a short second call: one phase
# It copies the committed campaign CSVs into $OUT (the campaign skips what they hold and retries their
# failures), prints the card and its clocks, then gives each phase its share of MINUTES in turn:
#   first    every variant at batch 1 and 16 with the memory protocols (model diversity)
#   compile  torch.compile reduce-overhead for one model per family more (stage H's CUDA-graphs fit)
#   sweep    every family's other precisions, then batch curves (tiers: gpu_campaign.py's docstring)
# Each phase stops at its deadline (a configuration started before it finishes), so MINUTES x 60 plus
# about a minute of imports and model builds must stay under the call's timeout. Afterwards, here:
#   cp <files_at>/gpu_nvidia_*_torch.csv <files_at>/gpu_nvidia_*_environment.json data/measured/
# for the card that ran, then commit, and score the rows as never fitted first
# (`scripts.calibration.evaluate_gpu_ours --update-doc`; `calibrate_cuda_graphs --write --update-doc`
# when reduce-overhead rows came).
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?OUT must name the folder whose files come back (the device tool sets it)}"
minutes=${1:-8.5}
shift || true
shares=("$@")
# The lent machine's python3 is its PyTorch 2.x environment; here (tests) PY=/usr/bin/python3 with
# CAMPAIGN_ARGS="--device cpu --sets nasbench201".
py=${PY:-python3}
[ ${#shares[@]} -gt 0 ] || shares=(first=0.35 compile=0.30 sweep=0.35)
for f in data/measured/gpu_nvidia_*; do
  cp "$f" "$OUT/" && chmod u+w "$OUT/$(basename "$f")"
done
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.limit,mig.mode.current \
  --format=csv || echo "gpu_lease.sh: no nvidia-smi here"
for s in "${shares[@]}"; do
  phase=${s%%=*}
  m=$($py -c "print(round($minutes * ${s#*=}, 2))")
  echo "== $phase: $m minutes ($(date -u +%H:%M:%S))"
  # torch's compiler logs a line per failed symbolic-shape check: thousands per model, nothing to act on.
  # shellcheck disable=SC2086  # CAMPAIGN_ARGS: more options, word-split on purpose
  $py -m scripts.measure.gpu_campaign --phase "$phase" --max-minutes "$m" --out "$OUT" ${CAMPAIGN_ARGS:-} 2>&1 \
    | grep -v -e pow_by_natural -e 'warnings.warn(' -e FutureWarning -e _warn_once -e 'Profiler clears' | tail -n 15 \
    || echo "gpu_lease.sh: phase $phase ended with an error (its rows so far are in $OUT); going on"
done
ls -l "$OUT"
