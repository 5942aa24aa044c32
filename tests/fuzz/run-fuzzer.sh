#!/usr/bin/env bash
# Runs one fuzz target for a bounded time from the seeds in the repository:
#   run-fuzzer.sh FUZZER SEED_DIR SECONDS WORK_DIR MAX_LEN [LIBFUZZER_ARGS...]
# New inputs go to WORK_DIR/corpus, emptied first so a run depends only on
# the seeds and its arguments (the seed folder is never written); crash
# reproducers go to WORK_DIR/artifacts. Exits non-zero on any finding; the
# last lines say how many inputs ran.
#
# libhdf5 runs in a child process of the importer (frontend/keras/
# Hdf5Process.h): its crashes and hangs on corrupt files are kcc::Errors,
# not findings. A sanitizer report of that child is a finding only when its
# first frame in libhdf5 or in this repository is the repository's (kcc's
# own reader code): the log is scanned for those after the run. (libFuzzer's
# death callback also runs in the child, so such a report leaves a crash-
# unit in WORK_DIR/artifacts although the run goes on: its reproducer.) Its timeout is 1 s here (a 64 KB input takes milliseconds),
# far below libFuzzer's -timeout, so a libhdf5 hang is an error before
# libFuzzer would call it a timeout of kcc, and costs the run little.
set -euo pipefail
fuzzer=$1 seeds=$2 seconds=$3 work=$4 maxlen=$5
shift 5
root="$(cd "$(dirname "$0")/../.." && pwd)"
# allow_user_poisoning=0: LLVM headers inlined into the instrumented kc
# dialect poison BumpPtrAllocator memory that uninstrumented libMLIR then
# uses, a false use-after-poison.
# Allocations over 2 GiB fail (malloc returns null, new throws) as they would
# in a process with that much memory: libhdf5 (in the reader child) asks for
# the sizes a corrupt file declares and copes with null; a kcc reader must
# not get that far.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allow_user_poisoning=0:allocator_may_return_null=1:max_allocation_size_mb=2048}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export KCC_HDF5_TIMEOUT_SECONDS="${KCC_HDF5_TIMEOUT_SECONDS:-1}"
rm -rf "$work/corpus" "$work/run"
mkdir -p "$work/corpus" "$work/artifacts" "$work/run"
cd "$work/run"
args=("$work/corpus" "$seeds" -max_total_time="$seconds" -max_len="$maxlen"
  -rss_limit_mb=3072 -malloc_limit_mb=2147483647 -timeout=10
  -artifact_prefix="$work/run/" -print_final_stats=1 "$@")
set +e
"$fuzzer" "${args[@]}" 2>&1 | tee "$work/run/log"
status=${PIPESTATUS[0]}
set -e
cp "$work"/run/{crash,leak,oom,timeout,slow-unit}-* "$work/artifacts/" 2>/dev/null || true

# The reader process's sanitizer reports, by their first frame in libhdf5 or
# in the repository.
own=0 lib=0
while read -r frame; do
  if [[ $frame == *libhdf5* ]]; then
    lib=$((lib + 1))
  else
    own=$((own + 1))
    echo "run-fuzzer: FINDING in kcc's HDF5 reader process: $frame"
  fi
done < <(awk -v root="$root/" '
  /ERROR: [A-Za-z]+Sanitizer|runtime error:/ { report = 1 }
  report && /^ +#[0-9]+ / && ($0 ~ (root "[^ ]*[.](cpp|h|inc):[0-9]+") || /libhdf5/) {
    print; report = 0
  }
' "$work/run/log")
echo "run-fuzzer: $lib sanitizer report(s) in libhdf5 (in the reader process," \
  "errors to kcc), $own in kcc's reader code"
[ "$own" -eq 0 ] || status=1
exit $status
