#!/usr/bin/env bash
# Builds kcc, kcc-opt and the unit and lit tests with AddressSanitizer and
# UndefinedBehaviorSanitizer in their own build folder and runs those tests.
#
#   scripts/sanitize.sh [BUILD_DIR=build-asan]
#
# Any sanitizer report fails the test it occurs in (UBSan does not recover,
# LeakSanitizer is on). The end-to-end training tests, the AOT examples and
# the fuzz targets are left out: they need targets not built here (and take
# minutes under ASan), and so are the tests that measure the process itself,
# which ASan changes: its shadow memory counts towards RSS and needs terabytes
# of address space (so an RLIMIT_AS test cannot run), and the install and
# rebuild tests build targets of the whole project. The Release build runs
# them all. KCC_JOBS sets the build's parallelism (default 2).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$(realpath -m "${1:-$ROOT/build-asan}")"
start=$(date +%s)

# -fno-sanitize=vptr: libLLVM and libMLIR are built without RTTI, so UBSan
# cannot find the dynamic type of their objects (llvm::cl::Option) and
# reports every virtual call on them (LLVM_USE_SANITIZER turns it off too).
SAN="-fsanitize=address,undefined -fno-sanitize=vptr -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
launcher=()
command -v ccache >/dev/null &&
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
# -O1: the sanitizers' usual level, and much faster to build than -O3.
# NDEBUG as in the Release build: the same code as shipped is checked.
cmake -G Ninja -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_FLAGS_RELEASE="-O1 -g1 -DNDEBUG $SAN" \
  -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g1 -DNDEBUG $SAN" \
  -DCMAKE_EXE_LINKER_FLAGS="$SAN" -DCMAKE_SHARED_LINKER_FLAGS="$SAN" \
  -DKCC_FUZZ=OFF "${launcher[@]}" >/dev/null

# kcc, kcc-opt, the example the lit tests run, and every unit test binary.
mapfile -t UNIT < <(ninja -C "$BUILD" -t targets all |
  sed -n 's|^\(tests/unit/[^:]*/\)\?\(kcc-unit-[A-Za-z0-9_-]*\): .*|\2|p' | sort -u)
ninja -C "$BUILD" -j "${KCC_JOBS:-2}" kcc kcc-opt kcc-example-checkpoint "${UNIT[@]}"
built=$(date +%s)

# allow_user_poisoning=0: LLVM headers inlined into instrumented code poison
# BumpPtrAllocator memory that uninstrumented libMLIR/libLLVM code then uses
# (a false use-after-poison).
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allow_user_poisoning=0:detect_stack_use_after_return=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export OMP_WAIT_POLICY=passive
cd "$BUILD"
status=0
measures_itself='^MemoryBudget\.NDArrayRefusesWhatItCannotAllocate$|^MappedData\.TrainsADatasetFourTimesTheMemoryLimitWithBoundedRss$|^compile_(memory|time)_scaling$'
builds_project='^install_out_of_tree$|^debian_package$|^rebuild_does_nothing$'
ctest -j "${KCC_JOBS:-2}" --output-on-failure -LE 'e2e|fuzz' \
  -E "_NOT_BUILT\$|^aot_|$measures_itself|$builds_project" || status=$?
end=$(date +%s)
echo "sanitize.sh: build $((built - start)) s, tests $((end - built)) s," \
  "$( [ $status -eq 0 ] && echo clean || echo FAILED)"
exit $status
