#!/usr/bin/env bash
# Builds one libFuzzer target of kcc's readers and runs it for a bounded time.
#
#   scripts/fuzz.sh TARGET [SECONDS=600] [LIBFUZZER_ARGS...]
#
# TARGET is one of:
#   keras-json     Keras to_json() specs        (frontend/keras)
#   keras-archive  .keras archives              (frontend/keras, libzip, HDF5)
#   keras-h5       legacy .h5 model files       (frontend/keras, HDF5)
#   npz            .npy / .npz arrays           (runtime/data/Npz.cpp)
#   mlir           .mlir text of the kc dialect (ir/: parse + verify)
#
# Only the reader's sources are compiled with clang-19 and
# -fsanitize=fuzzer,address,undefined (tests/fuzz/CMakeLists.txt); the rest
# links from a Release build in KCC_FUZZ_BUILD (default build-fuzz/, made
# here if missing). Seeds are tests/fuzz/corpus/TARGET; new inputs go to
# BUILD/tests/fuzz/long/TARGET/corpus and crash reproducers to .../artifacts.
# Needs clang-19 and libclang-rt-19-dev (scripts/install-deps.sh). The same
# targets run for a few seconds each as the fuzz_<target> ctests.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TARGET="${1:?usage: fuzz.sh TARGET [SECONDS] (keras-json, keras-archive, keras-h5, npz, mlir)}"
SECONDS_TO_RUN="${2:-600}"
shift $(( $# < 2 ? $# : 2 ))
BUILD="$(realpath -m "${KCC_FUZZ_BUILD:-$ROOT/build-fuzz}")"

# Keep in step with MAX_LEN in tests/fuzz/CMakeLists.txt.
case "$TARGET" in
  keras-json | mlir) MAX_LEN=16384 ;;
  keras-archive | keras-h5) MAX_LEN=65536 ;;
  npz) MAX_LEN=8192 ;;
  *) echo "fuzz.sh: unknown target '$TARGET'" >&2; exit 2 ;;
esac
command -v clang++-19 >/dev/null || {
  echo "fuzz.sh: clang++-19 not found (apt install clang-19 libclang-rt-19-dev)" >&2
  exit 2
}

if [ ! -f "$BUILD/build.ninja" ]; then
  launcher=()
  command -v ccache >/dev/null &&
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  cmake -G Ninja -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
    "${launcher[@]}" >/dev/null
fi
ninja -C "$BUILD" -j "${KCC_JOBS:-2}" "kcc-fuzz-$TARGET"
FUZZER="$BUILD/tests/fuzz/kcc-fuzz-$TARGET"
[ -x "$FUZZER" ] || {
  echo "fuzz.sh: $FUZZER was not built (is libclang-rt-19-dev installed?)" >&2
  exit 2
}
echo "fuzz.sh: running $TARGET for ${SECONDS_TO_RUN}s"
exec "$ROOT/tests/fuzz/run-fuzzer.sh" "$FUZZER" "$ROOT/tests/fuzz/corpus/$TARGET" \
  "$SECONDS_TO_RUN" "$BUILD/tests/fuzz/long/$TARGET" "$MAX_LEN" "$@"
