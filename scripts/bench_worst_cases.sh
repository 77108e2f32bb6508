#!/usr/bin/env bash
# Times `perfcard analyze` on the generated worst cases (scripts/fixtures/make_worst_cases.py) and prints, per file:
# size, wall time, peak RSS, the outcome (ok or the error's first words), and whether each aim holds:
# time <= 1 s per 10 MB of file (at least 1 s), peak RSS <= max(256 MB, 4 x the file).
#
#   scripts/bench_worst_cases.sh [SCALE]     (default 1: the figures in docs/robustness.md)
set -uo pipefail
cd "$(dirname "$0")/.."
scale="${1:-1}"
out=build/worst
cli=build/native/core/perfcard
[ -x "$cli" ] || { echo "bench_worst_cases.sh: build first (scripts/build.sh --native-only)" >&2; exit 1; }
command -v /usr/bin/time >/dev/null || { echo "bench_worst_cases.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
/usr/bin/python3 -m scripts.fixtures.make_worst_cases "$out" --scale "$scale" >/dev/null
printf '%-30s %9s %9s %10s  %-5s %-5s  %s\n' case "file MB" "wall s" "peak MB" time mem outcome
for f in "$out"/*.onnx; do
  size=$(stat -c %s "$f")
  /usr/bin/time -o /tmp/worst_time -f '%e %M' timeout 300 "$cli" analyze "$f" --json >/dev/null 2>/tmp/worst_err
  res=$(tail -1 /tmp/worst_time)
  wall=${res% *}; rss_kb=${res#* }
  outcome=$(grep -m1 'error' /tmp/worst_err | cut -c1-60)
  [ -z "$outcome" ] && outcome=ok
  mb=$(awk -v s="$size" 'BEGIN{printf "%.1f", s/1e6}')
  time_ok=$(awk -v w="$wall" -v s="$size" 'BEGIN{lim=s/1e7; if (lim<1) lim=1; print (w<=lim)?"yes":"NO"}')
  mem_ok=$(awk -v r="$rss_kb" -v s="$size" 'BEGIN{lim=4*s; if (lim<256e6) lim=256e6; print (r*1024<=lim)?"yes":"NO"}')
  printf '%-30s %9s %9s %10.1f  %-5s %-5s  %s\n' "$(basename "$f" .onnx)" "$mb" "$wall" "$(awk -v r="$rss_kb" 'BEGIN{print r/1024}')" \
    "$time_ok" "$mem_ok" "$outcome"
done
