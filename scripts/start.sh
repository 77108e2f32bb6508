#!/usr/bin/env bash
# npm start: set up what is missing, build the CLI, analyze the bundled default model.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh --native-only
model=public/examples/resnet50.onnx
echo
echo "== perfcard analyze $model --dim batch=1"
build/native/core/perfcard analyze "$model" --dim batch=1
