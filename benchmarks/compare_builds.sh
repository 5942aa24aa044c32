#!/usr/bin/env bash
# Two builds of kcc, alternated so that load on a shared machine hits both
# alike; medians of each and their ratio.
#
#   benchmarks/compare_builds.sh BASE HEAD [ROUNDS]
#       Two commits: builds kcc and kcc-bench-fusion at each (git worktrees
#       under $KCC_COMPARE_DIR, default /tmp/kcc-compare, kept for the next
#       comparison) and compares them on the reference models (examples/
#       mlp.json and cnn.json through `kcc bench`, the MLP 32-64-64-10 of
#       kcc-bench-fusion) and on every zoo fixture (compare_compile.py): the
#       compiled and interpreted steps, and HEAD's library_ms.
#   benchmarks/compare_builds.sh BEFORE_BIN AFTER_BIN ROUNDS CASE...
#       The same Google Benchmark cases in two builds of a benchmark binary:
#       benchmarks/compare_builds.sh /tmp/old/kcc-bench-fusion \
#           build/bin/kcc-bench-fusion 7 Compiled/mlp/64/real_time
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"

# The build directory of kcc at commit $1, built if it is not yet.
build_at() {
  local sha dir
  sha="$(git -C "$root" rev-parse --short=12 "$1^{commit}")"
  dir="${KCC_COMPARE_DIR:-/tmp/kcc-compare}/$sha"
  if [ ! -d "$dir/src" ]; then
    mkdir -p "$dir"
    git -C "$root" worktree add --detach "$dir/src" "$sha" >&2
  fi
  local launcher=()
  command -v ccache >/dev/null &&
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache
              -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  [ -f "$dir/build/build.ninja" ] ||
    cmake -S "$dir/src" -B "$dir/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      "${launcher[@]}" >&2
  ninja -C "$dir/build" kcc kcc-bench-fusion >&2
  echo "$dir/build/bin"
}

if [ ! -x "$1" ] && git -C "$root" rev-parse -q --verify "$1^{commit}" \
    >/dev/null; then
  rounds="${3:-3}"
  a="$(build_at "$1")"
  b="$(build_at "$2")"
  echo "## A = $1 ($(git -C "$root" rev-parse --short "$1")), B = $2 ($(git -C "$root" rev-parse --short "$2"))"
  echo
  echo "### Reference models"
  for batch in 32 64; do
    python3 "$here/compare_compile.py" --a "$a/kcc" --b "$b/kcc" \
      --rounds "$rounds" --batch "$batch" \
      --also "$root/examples/mlp.json" "$root/examples/cnn.json"
    echo
  done
  "$0" "$a/kcc-bench-fusion" "$b/kcc-bench-fusion" "$((rounds * 2 + 1))" \
    Compiled/mlp_small/16/real_time Interpreted/mlp_small/16/real_time
  echo
  echo "### Zoo"
  python3 "$here/compare_compile.py" --a "$a/kcc" --b "$b/kcc" \
    --rounds "$rounds"
  exit 0
fi

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
