#!/usr/bin/env bash
# Runs one fuzz target for a bounded time from the seeds in the repository:
#   run-fuzzer.sh FUZZER SEED_DIR SECONDS WORK_DIR MAX_LEN [LIBFUZZER_ARGS...]
# New inputs go to WORK_DIR/corpus, emptied first so a run depends only on
# the seeds and its arguments (the seed folder is never written); crash
# reproducers go to WORK_DIR/artifacts. Exits non-zero on any finding; the
# last lines say how many inputs ran.
#
# KCC_FUZZ_THIRD_PARTY=LIB (set by the targets that reach libhdf5): keep
# fuzzing past findings (libFuzzer's fork mode), then re-run each reproducer
# and fail only for those whose report does not reach LIB before kcc's own
# code. libhdf5 1.10 crashes and hangs on corrupt files; those are listed,
# not counted, so the run goes on to test kcc's side.
set -euo pipefail
fuzzer=$1 seeds=$2 seconds=$3 work=$4 maxlen=$5
shift 5
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
# allow_user_poisoning=0: LLVM headers inlined into the instrumented kc
# dialect poison BumpPtrAllocator memory that uninstrumented libMLIR then
# uses, a false use-after-poison.
# Allocations over 2 GiB fail (malloc returns null, new throws) as they would
# in a process with that much memory: libhdf5 asks for the sizes a corrupt
# file declares and copes with null; a kcc reader must not get that far.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allow_user_poisoning=0:allocator_may_return_null=1:max_allocation_size_mb=2048}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$here/lsan.supp:print_suppressions=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
rm -rf "$work/corpus" "$work/run"
mkdir -p "$work/corpus" "$work/artifacts" "$work/run"
cd "$work/run"
args=("$work/corpus" "$seeds" -max_total_time="$seconds" -max_len="$maxlen"
  -rss_limit_mb=3072 -malloc_limit_mb=2147483647 -timeout=10
  -artifact_prefix="$work/run/" -print_final_stats=1 "$@")
lib="${KCC_FUZZ_THIRD_PARTY:-}"
if [ -z "$lib" ]; then
  status=0
  "$fuzzer" "${args[@]}" || status=$?
  cp "$work"/run/{crash,leak,oom,timeout,slow-unit}-* "$work/artifacts/" 2>/dev/null || true
  exit $status
fi

"$fuzzer" "${args[@]}" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 \
  -ignore_ooms=1 2>&1 | grep -E '^#[0-9]+: |^INFO: fuzzed for|^INFO: exiting|^stat::' || true
own=0 third=0
for unit in "$work"/run/{crash,leak,oom,timeout}-*; do
  [ -e "$unit" ] || continue
  cp "$unit" "$work/artifacts/"
  report=$(timeout 30 "$fuzzer" -timeout=5 -rss_limit_mb=3072 \
    -malloc_limit_mb=2147483647 "$unit" 2>&1 || true)
  # The first frame that is in LIB or at a source line of this repository.
  first=$(printf '%s\n' "$report" | grep -E '^ +#[0-9]+ ' |
    grep -m1 -E "$lib|$root/[^ ]*\.(cpp|h|inc):[0-9]+" || true)
  if [ -z "$report" ] || printf '%s' "$first" | grep -q "$lib"; then
    third=$((third + 1))
    echo "run-fuzzer: in $lib: $(basename "$unit"): $(printf '%s\n' "$report" |
      grep -m1 -E 'ERROR|SUMMARY' | cut -c1-160)"
  elif ! printf '%s\n' "$report" | grep -qE 'ERROR|SUMMARY|timeout|deadly'; then
    echo "run-fuzzer: $(basename "$unit") does not reproduce alone"
  else
    own=$((own + 1))
    echo "run-fuzzer: FINDING $(basename "$unit"):"
    printf '%s\n' "$report" | grep -E 'ERROR|SUMMARY|^ +#[0-9]+ ' | head -30
  fi
done
echo "run-fuzzer: $own finding(s) in kcc, $third in $lib (reproducers in $work/artifacts)"
[ "$own" -eq 0 ]
