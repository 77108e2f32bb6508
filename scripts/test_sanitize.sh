#!/usr/bin/env bash
# The whole ctest suite under AddressSanitizer + UndefinedBehaviorSanitizer (docs/robustness.md):
# the Catch2 tests (the bad-input corpus included) and the fuzz replay over tests/data/bad and
# tests/data/fuzz-corpus. Any sanitizer report aborts the test that hit it, so ctest fails.
#
#   scripts/test_sanitize.sh          configure (once), build and run in build/asan
#   JOBS=1 scripts/test_sanitize.sh   build with fewer parallel jobs (default 2)
#
# Uses the default C++ compiler (g++ on Debian); CXX=clang++ works as well.
set -euo pipefail
cd "$(dirname "$0")/.."

build=build/asan
jobs="${JOBS:-2}"
if [ ! -f "$build/CMakeCache.txt" ]; then
  # -O1 keeps the sanitized suite fast enough to run on every npm test; -g keeps stack traces readable.
  cmake -S . -B "$build" -DPERFCARD_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-g -O1" \
    >/dev/null
fi
cmake --build "$build" -j"$jobs"

export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:strict_string_checks=1:check_initialization_order=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
ctest --test-dir "$build" --output-on-failure -j"$jobs"
