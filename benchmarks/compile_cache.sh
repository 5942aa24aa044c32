#!/usr/bin/env bash
# Compile time of each fixture's training step, cold and with the compile
# cache warm (KCC_CACHE_DIR, engine/DiskCache.h), measured through
# `kcc train --time-passes` in one run: per repetition a fresh cache folder,
# one cold run (lowering, LLVM -O3, machine code, JIT link: the "compiled
# train_step" line) and one warm run (key, disk read, JIT link: the "loaded
# train_step" line). Also the warm run's whole compile from the report's
# total (trace, kc-train-pipeline, the step and predict's forward). Prints
# medians as a Markdown table. Trains one step on a 64-example slice of
# Fashion-MNIST, so data loading and evaluation stay out of the way.
#   bash benchmarks/compile_cache.sh [MODEL ...]   (default: every fixture)
#   KCC_REPEAT=5 KCC_BUILD=build bash benchmarks/compile_cache.sh
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KCC="${KCC_BUILD:-$ROOT/build}/bin/kcc"
REPEAT="${KCC_REPEAT:-5}"
DATA="${KCC_DATA_DIR:-/usr/share/datasets/fashion-mnist}"
MODELS=("$@")
if [ ${#MODELS[@]} -eq 0 ]; then
  for m in "$ROOT"/tests/fixtures/keras/*.{keras,json,h5} "$ROOT"/examples/*.json; do
    case "$(basename "$m")" in bad_*|training.json) continue ;; esac
    MODELS+=("$m")
  done
fi
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# The first 64 training and 32 test examples, in the dataset's own format.
python3 - "$DATA" "$WORK/data" <<'PY'
import gzip, os, struct, sys
src, dst = sys.argv[1], sys.argv[2]
os.makedirs(dst)
for split, n in (("train", 64), ("t10k", 32)):
    for kind, item in (("images-idx3", 784), ("labels-idx1", 1)):
        name = f"{split}-{kind}-ubyte.gz"
        raw = gzip.open(os.path.join(src, name)).read()
        header = 16 if item > 1 else 8
        head = bytearray(raw[:header])
        head[4:8] = struct.pack(">I", n)
        with gzip.open(os.path.join(dst, name), "wb") as f:
            f.write(bytes(head) + raw[header:header + n * item])
PY

run() { # cache-folder log
  KCC_CACHE_DIR="$1" "$KCC" train "$model" --data-dir "$WORK/data" \
    --steps-per-epoch 1 --time-passes >"$2" 2>&1
}

echo "| model | cold train_step (ms) | warm train_step (ms) | cold / warm | warm compile, all phases (ms) |"
echo "|---|---:|---:|---:|---:|"
for model in "${MODELS[@]}"; do
  : >"$WORK/samples"
  ok=1
  for ((r = 0; r < REPEAT; ++r)); do
    rm -rf "$WORK/cache"
    if ! run "$WORK/cache" "$WORK/cold.log" || ! run "$WORK/cache" "$WORK/warm.log"; then
      ok=0
      break
    fi
    python3 - "$WORK/cold.log" "$WORK/warm.log" >>"$WORK/samples" <<'PY'
import re, sys
cold, warm = (open(p).read() for p in sys.argv[1:3])
c = re.search(r"kcc: compiled train_step for batch \d+ in (\d+) ms", cold)
w = re.search(r"kcc: loaded train_step for batch \d+ from the cache in (\d+) ms", warm)
t = re.search(r"([\d.]+) \(100\.0%\)\s+Total", warm)
if not (c and w and t):
    sys.exit("unexpected output:\n" + cold + warm)
print(c.group(1), w.group(1), float(t.group(1)) * 1e3)
PY
  done
  name="${model#"$ROOT"/}"
  if [ "$ok" = 0 ]; then
    echo "| $name | (kcc train failed: $(grep -m1 error "$WORK/cold.log" "$WORK/warm.log" | cut -c1-80)) | | | |"
    continue
  fi
  python3 - "$name" "$WORK/samples" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[2])]
cold, warm, total = (statistics.median(c) for c in zip(*rows))
print(f"| {sys.argv[1]} | {cold:.0f} | {warm:.0f} | {cold / max(warm, 1):.0f}x | {total:.0f} |")
PY
done
