#!/usr/bin/env bash
# Benchmark (not a test): parse+analyze time and peak memory, native and wasm, for the committed
# fixtures and two large embedded-weight models, next to the time it takes just to read the bytes once.
# Prints one JSON line per model and run; docs/benchmarks.md records a run with the machine described.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --python >/dev/null
bash scripts/build.sh >/dev/null
/usr/bin/python3 -m scripts.fixtures.make_bench_models >/dev/null 2>&1

models=(public/examples/resnet50.onnx)
for m in tests/data/models/*.onnx; do [ -f "$m" ] && models+=("$m"); done
models+=(build/bench-models/resnet50_full.onnx build/bench-models/mlp_1gb.onnx)

echo "# machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB"
echo "# native (build/native/core/perfcard_bench)"
for m in "${models[@]}"; do build/native/core/perfcard_bench "$m" --reps 10 --dim batch=1; done
if [ -f scripts/bench_wasm.mjs ]; then
  echo "# wasm (node $(node --version), scripts/bench_wasm.mjs)"
  for m in "${models[@]}"; do node --no-experimental-fetch scripts/bench_wasm.mjs "$m"; done
fi
echo "# predictors over the roofline in wasm (scripts/bench_predictors.mjs)"
node scripts/bench_predictors.mjs
echo "# nn runtime: scalar reference vs Eigen, native then wasm with SIMD (perfcard_nn_bench)"
build/native/core/perfcard_nn_bench
node --no-experimental-fetch build/wasm/core/perfcard_nn_bench.js
