#!/usr/bin/env bash
# Runs the tests of both builds: ctest in build/native and build/wasm (the same Catch2 tests, natively
# and under node), then the JS API tests (node --test tests/wasm/), which compare the wasm module with
# the native CLI, then the browser tests (node --test tests/web/: the site built into dist/, served on
# 127.0.0.1, driven in headless Debian Chromium through playwright-core; Chromium is installed with
# scripts/setup.sh --browser and playwright-core with npm ci when missing; only if Chromium cannot be
# installed are they skipped, with a message), and with the native build every Python test, found by one
# unittest discovery (scripts/**/test_*.py: data loaders and training tables, which skip when
# ../shared/data/public is absent; zoo generators; the campaign's bookkeeping; the PCWT weights format).
# The Python checks need `scripts/setup.sh --python`. Build first with scripts/build.sh. Every suite
# runs; the exit status says if any failed.
#
#   scripts/test.sh               everything
#   scripts/test.sh --native-only
#   scripts/test.sh --wasm-only   the wasm ctest and the JS API tests (the CLI comparisons need build/native)
set -uo pipefail
cd "$(dirname "$0")/.."

native=1
wasm=1
for arg in "$@"; do
  case "$arg" in
    --native-only) wasm=0 ;;
    --wasm-only) native=0 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "test.sh: unknown option '$arg'" >&2; exit 2 ;;
  esac
done
jobs="${PERFCARD_JOBS:-2}"
export NODE_PATH="${NODE_PATH:-/usr/share/nodejs}"

failed=()
run() {
  local name="$1"
  shift
  echo "== $name"
  if ! "$@"; then failed+=("$name"); fi
}
need() {
  if [ ! -f "$1/CMakeCache.txt" ]; then
    echo "test.sh: $1 is not built: run scripts/build.sh first" >&2
    failed+=("$1 (not built)")
    return 1
  fi
}

browser_tests() {
  if [ ! -x /usr/bin/chromium ]; then
    echo "test.sh: Chromium is missing; installing it (scripts/setup.sh --browser)"
    bash scripts/setup.sh --browser || true
  fi
  if [ ! -x /usr/bin/chromium ]; then
    echo "test.sh: SKIPPED the browser tests (tests/web/): Chromium could not be installed (scripts/setup.sh --browser failed)" >&2
    return 0
  fi
  if [ ! -f node_modules/playwright-core/package.json ]; then
    echo "test.sh: installing playwright-core (npm ci)"
    if ! npm ci --no-audit --no-fund --loglevel=error; then
      failed+=("npm ci (playwright-core for the browser tests)")
      return 0
    fi
  fi
  run "site build (node web/build.mjs)" node web/build.mjs --quiet
  run "browser (node --test tests/web/)" node --test --test-concurrency=1 tests/web/
}

if [ "$native" = 1 ] && need build/native; then
  run "ctest native" ctest --test-dir build/native --output-on-failure -j "$jobs"
  # every scripts/**/test_*.py; the data tables and the zoo generators need the native CLI (per-op costs
  # and totals are compared with `perfcard analyze`)
  run "Python (scripts/**/test_*.py: data, zoo, measure, weights)" \
    /usr/bin/python3 -m unittest discover -s scripts -p 'test_*.py' -t .
fi
if [ "$wasm" = 1 ] && need build/wasm; then
  run "ctest wasm" ctest --test-dir build/wasm --output-on-failure -j "$jobs"
  run "JS API (node --test tests/wasm/)" node --test tests/wasm/
  browser_tests
fi

if [ "${#failed[@]}" -gt 0 ]; then
  printf 'test.sh: FAILED: %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "test.sh: all passed"
