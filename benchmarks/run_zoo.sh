#!/usr/bin/env bash
#===- run_zoo.sh - Every Keras fixture: kcc against Keras 3's backends ----===#
#
# One training step of each fixture model (benchmarks/zoo/zoo_cases.py) at
# each batch size, in one run: kcc compiled and interpreted (`kcc bench
# --json`, one process per model, a cold compile, its peak RSS from
# /usr/bin/time), and the same .keras file loaded by Keras 3 and trained
# with model.fit on in-memory data (benchmarks/zoo/keras_zoo.py, one
# process per system and batch size): JAX (jit), TensorFlow (graph, and
# jit_compile=True) and
# PyTorch (eager, and jit_compile=True: torch.compile). Every system runs
# under the same `taskset` of THREADS cores with THREADS intra-op threads.
# Writes OUT/*.json and OUT/zoo.md (benchmarks/zoo/zoo_report.py).
#
#   bash benchmarks/run_zoo.sh OUT [--only a,b] [--batches "32 128"]
#                                  [--systems "kcc jax tf-graph ..."]
#
# Venvs: benchmarks/zoo/setup_zoo_venvs.sh ($KCC_ZOO_VENVS, default
# /tmp/kcc-zoo); kcc from $KCC_BUILD (default build/).
#
#===----------------------------------------------------------------------===#
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KCC="${KCC_BUILD:-$ROOT/build}/bin/kcc"
VENVS="${KCC_ZOO_VENVS:-/tmp/kcc-zoo}"
THREADS="${THREADS:-2}"
OUT="${1:?usage: run_zoo.sh OUT [--only a,b] [--batches \"32 128\"] [--systems ...]}"
shift
ONLY="" BATCHES="32 128"
SYSTEMS="kcc jax-jit tf-graph tf-jit torch-graph torch-jit"
while [ $# -gt 0 ]; do
  case "$1" in
    --only) ONLY="$2"; shift 2 ;;
    --batches) BATCHES="$2"; shift 2 ;;
    --systems) SYSTEMS="$2"; shift 2 ;;
    *) echo "run_zoo.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$OUT"
CPUS="0-$((THREADS - 1))"
mapfile -t CASES < <(python3 "$ROOT/benchmarks/zoo/zoo_cases.py" --only "$ONLY")
PATHS=()
for c in "${CASES[@]}"; do PATHS+=("$(cut -f1 <<<"$c")"); done
echo "run_zoo: ${#CASES[@]} models, batches $BATCHES, $THREADS threads," \
  "load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
cat /proc/loadavg > "$OUT/loadavg_start"

for batch in $BATCHES; do
  for system in $SYSTEMS; do
    json="$OUT/$system-b$batch.json"
    if [ "$system" = kcc ]; then
      echo "[" > "$json.tmp"
      first=1
      for c in "${CASES[@]}"; do
        IFS=$'\t' read -r path loss logits compiled <<<"$c"
        flags=()
        if [ "$compiled" = 0 ]; then
          flags=(--loss "$loss")
          [ "$logits" = 1 ] && flags+=(--from-logits)
        fi
        if out=$(KCC_CACHE_DIR=off OMP_NUM_THREADS=$THREADS /usr/bin/time -f '%M' -o "$OUT/rss" \
                 taskset -c "$CPUS" "$KCC" bench "$path" --batch "$batch" \
                 --repetitions 5 --json "${flags[@]}" 2>"$OUT/kcc.err"); then
          rss=$(tail -1 "$OUT/rss")
          entry=$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); d["peak_rss_mb"]=int(sys.argv[2])/1024; print(json.dumps(d))' "$out" "$rss")
        else
          entry=$(python3 -c 'import json,sys; print(json.dumps({"model": sys.argv[1], "batch": int(sys.argv[2]), "error": open(sys.argv[3]).read()[-500:]}))' \
                  "$(basename "$path" .keras)" "$batch" "$OUT/kcc.err")
        fi
        [ $first = 1 ] || echo "," >> "$json.tmp"
        first=0
        echo "$entry" >> "$json.tmp"
        echo "[kcc] $(basename "$path" .keras) b$batch" >&2
      done
      echo "]" >> "$json.tmp"
      mv "$json.tmp" "$json"
      continue
    fi
    backend=${system%%-*} mode=${system#*-}
    case "$backend" in
      jax) venv="$VENVS/jax"; kb=jax ;;
      tf) venv="$VENVS/tf"; kb=tensorflow ;;
      torch) venv="$VENVS/torch"; kb=torch ;;
    esac
    KERAS_BACKEND=$kb JAX_PLATFORMS=cpu TF_CPP_MIN_LOG_LEVEL=3 \
      OMP_NUM_THREADS=$THREADS taskset -c "$CPUS" \
      "$venv/bin/python" "$ROOT/benchmarks/zoo/keras_zoo.py" --mode "$mode" \
      --batch "$batch" --threads "$THREADS" --repetitions 5 --min-time 0.5 \
      --json "$json" "${PATHS[@]}" > /dev/null 2> "$OUT/$system-b$batch.log" ||
      echo "run_zoo: $system b$batch failed (see $OUT/$system-b$batch.log)" >&2
    grep '^\[' "$OUT/$system-b$batch.log" >&2 || true
  done
done
cat /proc/loadavg > "$OUT/loadavg_end"
python3 "$ROOT/benchmarks/zoo/zoo_report.py" "$OUT" > "$OUT/zoo.md"
echo "run_zoo: $OUT/zoo.md" >&2
