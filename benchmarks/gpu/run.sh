#!/usr/bin/env bash
#===- run.sh - kcc on a GPU: build, test, benchmark, one results file -----===#
#
# One command on a machine with an NVIDIA GPU, the CUDA toolkit and the
# Debian packages of scripts/install-deps.sh:
#
#   bash benchmarks/gpu/run.sh [RESULTS_FILE]
#
# 1. builds the CUDA targets (kcc-unit-cuda, kcc-bench-gpu, kcc-opt);
# 2. runs the GPU tests: the MLP, CNN and residual train steps compiled on
#    the GPU, replayed as CUDA graphs and run op by op on the GPU, each
#    against the CPU interpreter (tolerances in
#    tests/unit/cuda/CudaRuntimeTest.cpp: loss 1e-4 relative, weights 1e-4
#    relative or 2.5e-3 absolute), plus ptxas on every kernel and the conv /
#    pooling lowerings on the CPU; a skipped GPU test is a failure here;
# 3. runs the GPU benchmarks: compiled vs eager train steps, and the
#    fraction of the cuBLASLt SGEMM rate that the GEMM-bound MLP
#    4096-4096-4096-10 at batch 512 keeps over a whole step.
# TF32 is off everywhere (cuBLASLt COMPUTE_32F, and NVIDIA_TF32_OVERRIDE=0).
# Everything goes to RESULTS_FILE (default: build-gpu/gpu-results.txt).
#
# Environment (optional): KCC_BUILD_DIR (default build-gpu/ in the repo),
# KCC_JOBS (default: all cores), KCC_REPS (benchmark repetitions, default 5),
# KCC_TIME_LIMIT (seconds for the whole run, default 470).
#
#===----------------------------------------------------------------------===#
set -euo pipefail

repo="$(cd "$(dirname "$0")/../.." && pwd)"
build="${KCC_BUILD_DIR:-$repo/build-gpu}"
jobs="${KCC_JOBS:-$(nproc)}"
reps="${KCC_REPS:-5}"
limit="${KCC_TIME_LIMIT:-470}"
mkdir -p "$build"
results="${1:-$build/gpu-results.txt}"
start=$SECONDS

log() { echo "== $*" | tee -a "$results"; }
die() { echo "run.sh: error: $*" | tee -a "$results" >&2; exit 1; }
left() { echo $(( limit - (SECONDS - start) )); }
trap 'echo "run.sh: failed at line $LINENO (see $results)" >&2' ERR

: >"$results"
log "kcc GPU run, $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)"

# --- Preconditions, each with the fix in the message ----------------------
command -v cmake >/dev/null || die "cmake not found (bash scripts/install-deps.sh)"
command -v ninja >/dev/null || die "ninja not found (bash scripts/install-deps.sh)"
cuda_root="${CUDA_HOME:-/usr/local/cuda}"
[[ -x "$cuda_root/bin/ptxas" ]] || die "no CUDA toolkit at $cuda_root (set CUDA_HOME)"
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader \
    | sed 's/^/   gpu: /' | tee -a "$results" || die "nvidia-smi failed: is the driver loaded?"
else
  die "nvidia-smi not found: this script needs a machine with an NVIDIA GPU and driver"
fi
export PATH="$cuda_root/bin:$PATH"
# cuBLASLt is dlopen'ed at run time; libcuda comes from the driver.
export LD_LIBRARY_PATH="$cuda_root/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export NVIDIA_TF32_OVERRIDE=0
export OMP_WAIT_POLICY=passive

# --- 1. Build ------------------------------------------------------------
log "build ($jobs jobs) in $build"
if [[ ! -f "$build/build.ninja" ]]; then
  cmake -G Ninja "$repo" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DCUDAToolkit_ROOT="$cuda_root" >>"$results" 2>&1 \
    || die "cmake configure failed (tail of $results)"
fi
timeout "$(left)" ninja -C "$build" -j"$jobs" kcc-unit-cuda kcc-bench-gpu kcc-opt \
  >>"$results" 2>&1 || die "build failed or timed out (see the end of $results)"
log "built in $((SECONDS - start)) s"

test_bin="$build/tests/unit/cuda/kcc-unit-cuda"
bench_bin="$build/bin/kcc-bench-gpu"
[[ -x "$test_bin" ]] || die "missing $test_bin (CUDA toolkit not found by CMake?)"
[[ -x "$bench_bin" ]] || die "missing $bench_bin"

# --- 2. Tests --------------------------------------------------------------
log "tests: compiled on GPU vs interpreted on GPU vs CPU interpreter"
test_out="$build/gpu-tests.txt"
status=0
timeout "$(left)" "$test_bin" --gtest_color=no >"$test_out" 2>&1 || status=$?
grep -E '^\[ *(OK|FAILED|SKIPPED|PASSED|cuda) *\]|tests? ran|Failure|error' \
  "$test_out" | tee -a "$results" >/dev/null
tail -n 5 "$test_out" | tee -a "$results"
[[ $status -eq 0 ]] || die "GPU tests failed (exit $status): $test_out"
if grep -q '^\[  SKIPPED \]' "$test_out"; then
  grep -m1 'no CUDA device found' "$test_out" | tee -a "$results" || true
  die "GPU tests were skipped on a machine that should have a GPU"
fi

log "lit: tests/lit/codegen/cuda"
lit="/usr/lib/llvm-19/build/utils/lit/lit.py"
if [[ -f "$lit" ]]; then
  timeout "$(left)" python3 "$lit" -sv "$build/tests/lit" --filter cuda \
    >>"$results" 2>&1 || die "lit tests failed (see $results)"
else
  log "lit.py not found at $lit: lit tests not run"
fi

# --- 3. Benchmarks ---------------------------------------------------------
remaining=$(left)
[[ $remaining -gt 60 ]] || die "no time left for the benchmarks ($remaining s)"
log "benchmarks: $reps repetitions, medians (TF32 off)"
json="$build/gpu-bench.json"
timeout "$remaining" "$bench_bin" --benchmark_repetitions="$reps" \
  --benchmark_report_aggregates_only=true --benchmark_min_time=0.2 \
  --benchmark_out="$json" --benchmark_out_format=json \
  >>"$results" 2>&1 || die "benchmark failed or timed out (see $results)"

# Ratios from the medians of this one run.
python3 - "$json" <<'PY' | tee -a "$results"
import json, sys
# UseRealTime() appends "/real_time" to every name.
runs = {b["run_name"].replace("/real_time", ""): b
        for b in json.load(open(sys.argv[1]))["benchmarks"]
        if b.get("aggregate_name") == "median"}
def get(name, key="real_time"):
    b = runs.get(name)
    return None if b is None else b.get(key)
print("== summary (medians)")
sgemm = get("BM_Sgemm", "gemm_TFLOPs")
if sgemm:
    print(f"   cuBLASLt SGEMM 512x4096x4096: {sgemm:.1f} TFLOP/s")
for model in ["mlp4096", "mlp", "cnn", "residual"]:
    c, e = get(f"BM_Compiled/{model}"), get(f"BM_Eager/{model}")
    if c is None or e is None:
        print(f"   {model}: missing"); continue
    unit = runs[f"BM_Compiled/{model}"]["time_unit"]
    line = (f"   {model}: compiled {c:.3f} {unit}/step, eager {e:.3f} {unit}/step, "
            f"speedup {e / c:.2f}x, kernels/step {get(f'BM_Compiled/{model}', 'kernels'):.0f} "
            f"vs eager ops/step {get(f'BM_Eager/{model}', 'ops_per_step'):.0f}")
    rate = get(f"BM_Compiled/{model}", "gemm_TFLOPs")
    if model == "mlp4096" and sgemm and rate:
        line += f"; step GEMM rate {rate:.1f} TFLOP/s = {rate / sgemm:.2f} of cuBLAS"
    print(line)
PY

log "done in $((SECONDS - start)) s; results in $results"
