#!/usr/bin/env bash
# Compile time of a recurrent training step against the sequence length:
# the Keras-written LSTM classifier (tests/fixtures/keras/recurrent/
# rnn_lstm.keras: Embedding, LSTM(12), Dense(1, sigmoid); Adam, binary
# crossentropy) with its 40 steps replaced by T, compiled to an object
# file (--emit=obj). Recurrence is a loop in the IR, so neither the time
# nor the object should grow with T.
#   bash benchmarks/lstm_compile_time.sh [T ...]     (default: 40 400 4000)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KCC="${KCC_BUILD:-$ROOT/build}/bin/kcc"
STEPS=("$@")
[ ${#STEPS[@]} -gt 0 ] || STEPS=(40 400 4000)
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

printf '%6s %9s %8s %10s\n' T seconds MB "object B"
for t in "${STEPS[@]}"; do
  python3 - "$ROOT/tests/fixtures/keras/recurrent/rnn_lstm.keras" "$t" \
    "$WORK/model.json" <<'PY'
import json, sys, zipfile
archive, steps, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
spec = json.loads(zipfile.ZipFile(archive).read("config.json"))
def walk(v):
    # Every [batch, 40, ...] shape (input, build configs, tensors) gets T.
    if isinstance(v, dict):
        for k, x in v.items():
            if k in ("batch_shape", "input_shape", "shape") and \
                    isinstance(x, list) and len(x) >= 2 and x[1] == 40:
                x[1] = steps
            else:
                walk(x)
    elif isinstance(v, list):
        for x in v:
            walk(x)
walk(spec)
json.dump(spec, open(out, "w"))
PY
  /usr/bin/time -f '%e %M' -o "$WORK/time" \
    "$KCC" "$WORK/model.json" --emit=obj -o "$WORK/step.o"
  read -r seconds kb < <(tail -1 "$WORK/time")
  printf '%6s %9s %8d %10d\n' "$t" "$seconds" $((kb / 1024)) \
    "$(stat -c %s "$WORK/step.o")"
done
