#!/usr/bin/env bash
# Compile time and peak memory of kcc against the depth of the model: the
# Keras spec of N hidden Dense(64, relu) layers (benchmarks/deep_mlp.py),
# compiled once per N to an object file (--emit=obj) with --time-passes.
# Prints a table: N, wall seconds, peak RSS (MB), and the passes that took
# the most time with their seconds.
#   bash benchmarks/compile_time.sh [N ...]     (default: 50 100 200 400 800 1600)
#   KCC_EMIT=train bash benchmarks/compile_time.sh 1000 2000 4000
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KCC="${KCC_BUILD:-$ROOT/build}/bin/kcc"
EMIT="${KCC_EMIT:-obj}"
TOP="${KCC_TOP_PASSES:-3}"
SIZES=("$@")
[ ${#SIZES[@]} -gt 0 ] || SIZES=(50 100 200 400 800 1600)
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

printf '%6s %9s %8s  %s\n' N seconds MB "top passes (s)"
for n in "${SIZES[@]}"; do
  python3 "$ROOT/benchmarks/deep_mlp.py" "$n" -o "$WORK/model.json"
  /usr/bin/time -f '%e %M' -o "$WORK/time" \
    "$KCC" "$WORK/model.json" --emit="$EMIT" -o "$WORK/out" \
    --time-passes 2>"$WORK/timing"
  python3 - "$n" "$WORK/time" "$WORK/timing" "$TOP" <<'PY'
import re, sys
n, time_file, timing_file, top = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
seconds, kb = open(time_file).read().split()[-2:]
# kcc's report is a tree (compile phases, pipelines, passes): count the
# leaves, so a phase is not counted beside the passes it holds.
entries = []
for line in open(timing_file):
    # One column (wall) or two (user, wall) of "seconds (percent)": the
    # last is the wall time.
    m = re.match(r"((?:\s+[\d.]+ \(\s*[\d.]+%\))+)( +)(.*\S)", line)
    if m and m.group(3) not in ("Total", "Rest"):
        wall = re.findall(r"([\d.]+) \(", m.group(1))[-1]
        entries.append((len(m.group(2)), m.group(3), float(wall)))
passes = {}
for i, (indent, name, secs) in enumerate(entries):
    if i + 1 < len(entries) and entries[i + 1][0] > indent:
        continue
    if "Pipeline" in name or name.startswith("'") or name.startswith("(A)"):
        continue
    passes[name] = passes.get(name, 0.0) + secs
best = sorted(passes.items(), key=lambda kv: -kv[1])[:top]
print(f"{n:>6} {float(seconds):9.2f} {int(kb) / 1024:8.0f}  " +
      ", ".join(f"{k} {v:.2f}" for k, v in best))
PY
done
echo "kcc --emit=$EMIT, $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
