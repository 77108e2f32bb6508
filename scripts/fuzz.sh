#!/usr/bin/env bash
# Builds the libFuzzer target of the ONNX loader with clang (ASan + UBSan + coverage) in build/fuzz and
# runs it, seeded with the bad-input corpus, the fuzz corpus and the bundled example model.
#
#   scripts/fuzz.sh                 fuzz for 300 s
#   scripts/fuzz.sh 3600            fuzz for an hour
#   scripts/fuzz.sh 0 FILE...       replay FILEs through the fuzz target (reproduce a crash)
#   FUZZ_FORK=1 scripts/fuzz.sh     keep going after a crash (libFuzzer -fork=1 -ignore_crashes=1)
#   FUZZ_TARGET=pcwt scripts/fuzz.sh       the PCWT weights reader (seeded with tests/data/weights)
#   FUZZ_TARGET=options scripts/fuzz.sh    the options text of the JS API (seeded with JSON examples)
#
# New interesting inputs collect in build/fuzz/corpus (not committed); crashes, hangs and leaks are written
# to build/fuzz/artifacts/. Minimize a reproducer with
#   build/fuzz/tests/fuzz/perfcard_fuzz_loader -minimize_crash=1 -runs=20000 CRASH_FILE
# fix the bug, and copy the minimized file into tests/data/fuzz-corpus/ so the replay test keeps it fixed.
# See docs/robustness.md.
set -euo pipefail
cd "$(dirname "$0")/.."

secs="${1:-300}"
jobs="${JOBS:-2}"
build=build/fuzz
if [ ! -f "$build/CMakeCache.txt" ]; then
  CC=clang CXX=clang++ cmake -S . -B "$build" -DPERFCARD_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
target="${FUZZ_TARGET:-onnx}"
case "$target" in
  onnx) bin=perfcard_fuzz_loader; seeds=(tests/data/bad tests/data/fuzz-corpus tests/data/fuzz-corpus-grown)
        dict=(-dict=tests/fuzz/onnx.dict)
        [ -d public/examples ] && seeds+=(public/examples) ;;
  pcwt) bin=perfcard_fuzz_pcwt; seeds=(tests/data/weights tests/data/fuzz-corpus-pcwt); dict=() ;;
  options) bin=perfcard_fuzz_options; seeds=(tests/data/fuzz-corpus-options); dict=(-dict=tests/fuzz/options.dict) ;;
  *) echo "fuzz.sh: FUZZ_TARGET must be onnx, pcwt or options" >&2; exit 2 ;;
esac
cmake --build "$build" -j"$jobs" --target "$bin"
fuzzer="$build/tests/fuzz/$bin"

if [ "$secs" = 0 ]; then
  shift
  exec "$fuzzer" -timeout=5 -rss_limit_mb=2048 "$@"
fi

corpus="$build/corpus"
[ "$target" = onnx ] || corpus+="-$target"
mkdir -p "$corpus" "$build/artifacts"
extra=()
if [ "${FUZZ_FORK:-0}" = 1 ]; then extra=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1); fi
exec "$fuzzer" -max_total_time="$secs" -timeout=5 -rss_limit_mb=2048 -max_len=65536 \
  "${dict[@]}" -artifact_prefix="$build/artifacts/" -print_final_stats=1 "${extra[@]}" \
  "$corpus" "${seeds[@]}"
