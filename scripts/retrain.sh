#!/usr/bin/env bash
# Retrains every learned predictor on the present roofline constants and rewrites what reports them, in the
# order the files depend on each other (one command; hours on a 2-core machine, most of it the networks and
# the ensemble's out-of-fold refits):
#   zoo          scripts.zoo.all                   every graph the training rows need (resumable: seconds when done)
#   trees        scripts.training.trees --write     trees.pcwt (its leave-one-device-out figures included)
#   gnn          scripts.training.gnn --write       gnn.pcwt
#   transformer  scripts.training.transformer --write
#   ensemble     scripts.training.ensemble --write  on the members just written (out-of-fold refits of each), with
#                every candidate: roofline, trees, GNN, transformer (the GNN's three refits are ~75 of its ~130
#                minutes; PERFCARD_ENSEMBLE_MEMBERS=roofline,trees,transformer leaves them out)
#   probed       scripts.calibration.evaluate_cpu_machines --write-weights   each file's figure on the probed CPUs
#                (machines no training row ran on, on their probe entries), which `auto` goes by on this-machine
#   reports      scripts.training.evaluate --update-doc, scripts.calibration.evaluate_gpu_ours --update-doc,
#                scripts.calibration.evaluate_cpu_machines --update-doc
#   wasm         scripts/build.sh                   the page's module and the CLI with the new files
# Run it after anything that changes a feature the files read: the roofline's constants (scripts/calibrate.sh:
# the roofline's latency, busy time and plan are features), the core's feature rows, or the training sources
# (scripts/training/rows.py). Every step rebuilds the native CLI first, because the core embeds the weights
# files and roofline.json that the next step's `perfcard eval` queries read.
#   scripts/retrain.sh                 every step
#   scripts/retrain.sh --from gnn      resume at a step (the earlier ones' files are already written); --from
#                                      ensemble also resumes its out-of-fold refits at the first unfinished fold
#   scripts/retrain.sh --only trees,transformer,ensemble   these steps alone, in the order above (the
#                                      ensemble then combines the committed GNN file with the new ones)
# Each step's output goes to build/retrain/<step>.log, with its time; the script stops at the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
steps=(zoo trees gnn transformer ensemble probed reports wasm)
from=${steps[0]}
only=""
if [ "${1:-}" = "--from" ]; then
  from=${2:?"--from needs a step: ${steps[*]}"}
  case " ${steps[*]} " in *" $from "*) ;; *) echo "retrain.sh: unknown step '$from' (steps: ${steps[*]})" >&2; exit 2 ;; esac
elif [ "${1:-}" = "--only" ]; then
  only=",${2:?"--only needs steps: ${steps[*]}"},"
  for s in ${2//,/ }; do
    case " ${steps[*]} " in *" $s "*) ;; *) echo "retrain.sh: unknown step '$s' (steps: ${steps[*]})" >&2; exit 2 ;; esac
  done
elif [ -n "${1:-}" ]; then
  echo "usage: scripts/retrain.sh [--from STEP | --only STEP,STEP...]   (steps: ${steps[*]})" >&2
  exit 2
fi
py=/usr/bin/python3
mkdir -p build/retrain
started=0
ran_before=0
for step in "${steps[@]}"; do
  [ "$step" = "$from" ] && started=1
  [ "$started" = 1 ] || continue
  [ -z "$only" ] || [[ "$only" == *",$step,"* ]] || continue
  bash scripts/build.sh --native-only >/dev/null
  t0=$(date +%s)
  echo "== $step ($(date -u +%H:%M:%S))"
  case "$step" in
    zoo) nice -n 19 $py -m scripts.zoo.all ;;
    trees) nice -n 19 $py -m scripts.training.trees --write ;;
    gnn) nice -n 19 $py -m scripts.training.gnn --write ;;
    transformer) nice -n 19 $py -m scripts.training.transformer --write ;;
    ensemble)
      # The core's rows and each member's out-of-fold folds are kept as they are made (build/retrain/ensemble_cache.pkl*),
      # so that `--from ensemble` resumes a cut run; a run that retrained anything first starts them afresh.
      [ "$ran_before" = 1 ] && rm -f build/retrain/ensemble_cache.pkl*
      nice -n 19 $py -m scripts.training.ensemble --write --cache build/retrain/ensemble_cache.pkl \
        --members "${PERFCARD_ENSEMBLE_MEMBERS:-roofline,trees,gnn,transformer}" ;;
    probed) nice -n 19 $py -m scripts.calibration.evaluate_cpu_machines --write-weights ;;
    reports)
      $py -m scripts.training.evaluate --update-doc
      $py -m scripts.calibration.evaluate_gpu_ours --update-doc
      $py -m scripts.calibration.evaluate_cpu_machines --update-doc ;;
    wasm) bash scripts/build.sh ;;
  esac > "build/retrain/$step.log" 2>&1 || { echo "retrain.sh: $step failed; see build/retrain/$step.log" >&2; exit 1; }
  ran_before=1
  echo "== $step: $(( $(date +%s) - t0 )) s"
done
