#!/usr/bin/env bash
#===- compare-emit.sh - Two kcc builds emit the same code for the zoo -----===#
#
# A refactoring that claims no behaviour change shows it here: every zoo
# fixture (benchmarks/zoo/zoo_cases.py) and examples/*.json, with the loss it
# trains with, through `kcc --emit=STAGE` (llvm by default) of both builds at
# batch 32; the outputs are compared with their top-level definitions sorted
# (symbol order may differ). Prints one line per model and exits 1 if any
# differs.
#
#   scripts/compare-emit.sh BEFORE_KCC AFTER_KCC [STAGE]
#
#===----------------------------------------------------------------------===#
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
before="${1:?usage: compare-emit.sh BEFORE_KCC AFTER_KCC [STAGE]}"
after="${2:?usage: compare-emit.sh BEFORE_KCC AFTER_KCC [STAGE]}"
stage="${3:-llvm}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export KCC_CACHE_DIR=off

# One definition per block (a line that starts a function or global, up to
# the next), sorted, so that only the order of symbols may differ.
sorted_defs() {
  python3 -c '
import re, sys
blocks, cur = [], []
for line in open(sys.argv[1]):
    if re.match(r"^(define|declare|@|func\.func|llvm\.func|  (func\.func|llvm\.func|llvm\.mlir\.global))", line) and cur:
        blocks.append("".join(cur)); cur = []
    cur.append(line)
blocks.append("".join(cur))
sys.stdout.write("".join(sorted(blocks)))' "$1"
}

cases="$work/cases"
python3 "$ROOT/benchmarks/zoo/zoo_cases.py" > "$cases"
for spec in "$ROOT"/examples/*.json; do
  printf '%s\tsparse_categorical_crossentropy\t0\t0\n' "$spec" >> "$cases"
done
status=0 n=0
while IFS=$'\t' read -r path loss logits compiled; do
  name="$(basename "$path")"
  flags=(--batch 32)
  if [ "$compiled" != "1" ]; then
    flags+=(--loss "$loss")
    [ "$logits" = 1 ] && flags+=(--from-logits)
  fi
  for which in before after; do
    bin="$before"; [ "$which" = after ] && bin="$after"
    if ! "$bin" --emit="$stage" "${flags[@]}" "$path" -o "$work/$which.out" \
        2> "$work/$which.err"; then
      echo "$name: $which failed: $(head -1 "$work/$which.err")"
      status=1
      continue 2
    fi
    sorted_defs "$work/$which.out" > "$work/$which.sorted"
  done
  n=$((n + 1))
  if cmp -s "$work/before.sorted" "$work/after.sorted"; then
    echo "$name: identical ($(wc -l < "$work/after.out") lines)"
  else
    echo "$name: DIFFERS"
    diff "$work/before.sorted" "$work/after.sorted" | head -10 || true
    status=1
  fi
done < "$cases"
echo "$n models compared at --emit=$stage"
exit $status
