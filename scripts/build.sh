#!/usr/bin/env bash
# Builds PerfCard: the native library, CLI and tests in build/native, and the WebAssembly module with its
# JS API in build/wasm (the files to ship are in build/wasm/dist). Idempotent and incremental: a second run
# only rebuilds what changed.
#
#   scripts/build.sh               both builds
#   scripts/build.sh --native-only
#   scripts/build.sh --wasm-only
#
# PERFCARD_JOBS sets the parallelism (default 2).
set -euo pipefail
cd "$(dirname "$0")/.."

native=1
wasm=1
for arg in "$@"; do
  case "$arg" in
    --native-only) wasm=0 ;;
    --wasm-only) native=0 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "build.sh: unknown option '$arg'" >&2; exit 2 ;;
  esac
done
if [ "$native" = 0 ] && [ "$wasm" = 0 ]; then
  echo "build.sh: --native-only and --wasm-only exclude each other" >&2
  exit 2
fi
jobs="${PERFCARD_JOBS:-2}"

if [ "$native" = 1 ]; then
  if [ ! -f build/native/CMakeCache.txt ]; then
    cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release
  fi
  cmake --build build/native -j "$jobs"
fi

if [ "$wasm" = 1 ]; then
  # Debian's emscripten runs its tools under node and finds their modules through NODE_PATH.
  export NODE_PATH="${NODE_PATH:-/usr/share/nodejs}"
  if [ -f build/wasm/CMakeCache.txt ] && ! grep -q '^CMAKE_TOOLCHAIN_FILE.*Emscripten.cmake' build/wasm/CMakeCache.txt; then
    echo "build.sh: build/wasm was not configured with emcmake; configuring it afresh" >&2
    rm -rf build/wasm
  fi
  if [ ! -f build/wasm/CMakeCache.txt ]; then
    emcmake cmake -S . -B build/wasm -DCMAKE_BUILD_TYPE=Release
  fi
  cmake --build build/wasm -j "$jobs"

  # Download size of what a page loads: the module, its loader and the API.
  total_raw=0
  total_gz=0
  for f in perfcard_wasm.wasm perfcard_wasm.js perfcard.js; do
    raw=$(stat -c %s "build/wasm/dist/$f")
    gz=$(gzip -9 -c "build/wasm/dist/$f" | wc -c)
    total_raw=$((total_raw + raw))
    total_gz=$((total_gz + gz))
    printf 'build.sh: dist/%-20s %8d bytes, %7d gzip\n' "$f" "$raw" "$gz"
  done
  printf 'build.sh: wasm + JS total        %8d bytes, %7d gzip (%d KiB)\n' "$total_raw" "$total_gz" $((total_gz / 1024))
  # Loaded with the first learned predictor's file, not before.
  for f in perfcard_learned.wasm perfcard_learned.js; do
    printf 'build.sh: dist/%-20s %8d bytes, %7d gzip (on first use)\n' "$f" "$(stat -c %s "build/wasm/dist/$f")" \
      "$(gzip -9 -c "build/wasm/dist/$f" | wc -c)"
  done
fi
