#!/usr/bin/env bash
# npm start: set up what is missing, build the CLI, the wasm module and the site; analyze and predict the
# bundled default model with the CLI; then serve the site on 127.0.0.1 with that model preloaded.
#   PERFCARD_NO_SERVE=1 npm start   stops after the CLI output (no server)
#   PORT=9000 npm start             serves on another port (default 8080, or the next free one)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
node web/build.mjs
model=public/examples/resnet50.onnx
echo
echo "== perfcard analyze $model --dim batch=1"
build/native/core/perfcard analyze "$model" --dim batch=1
echo
echo "== perfcard predict $model --device all --batch 1,8"
build/native/core/perfcard predict "$model" --device all --batch 1,8
if [ "${PERFCARD_NO_SERVE:-0}" = 1 ]; then exit 0; fi
echo
echo "== the site (dist/), with $model preloaded; Ctrl-C stops the server"
exec node scripts/serve.mjs --root dist --port "${PORT:-8080}" --open-path "#example=resnet50"
