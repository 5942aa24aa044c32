#!/usr/bin/env bash
# Times the same Google Benchmark cases in two builds of a benchmark binary,
# alternating the two for each repetition so that load on a shared machine
# hits both alike, and prints the median of each and their ratio.
#
#   benchmarks/compare_builds.sh BEFORE_BIN AFTER_BIN ROUNDS CASE...
#   benchmarks/compare_builds.sh /tmp/old/kcc-bench-fusion \
#       build/bin/kcc-bench-fusion 7 Compiled/mlp/64/real_time
set -euo pipefail
before="$1"
after="$2"
rounds="$3"
shift 3
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
for c in "$@"; do
  for _ in $(seq "$rounds"); do
    for which in before after; do
      bin="$before"
      [ "$which" = after ] && bin="$after"
      t="$("$bin" --benchmark_filter="^$c\$" --benchmark_format=csv 2>/dev/null |
           grep "^\"$c\"" | cut -d, -f3)"
      echo "$c $which $t" >> "$out"
    done
  done
done
python3 - "$out" "$rounds" <<'PY'
import collections, statistics, sys
times = collections.defaultdict(list)
for line in open(sys.argv[1]):
    case, which, t = line.split()
    times[(case, which)].append(float(t))
print(f"medians of {sys.argv[2]} alternating runs each (us)")
for case in dict.fromkeys(k[0] for k in times):
    b = statistics.median(times[(case, "before")])
    a = statistics.median(times[(case, "after")])
    print(f"{case:40s} before {b:10.1f}  after {a:10.1f}  after/before {a / b:5.2f}")
PY
