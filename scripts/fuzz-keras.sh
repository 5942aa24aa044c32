#!/usr/bin/env bash
# Builds the libFuzzer target of the Keras JSON importer with clang-19
# (-fsanitize=fuzzer,address,undefined) and runs it for a bounded time.
#
#   scripts/fuzz-keras.sh [SECONDS=600] [BUILD_DIR=build-fuzz-keras]
#
# The importer sources (frontend/keras) are compiled instrumented; the rest
# of kcc (the layer API, the kc dialect) is linked from a normal Release
# build made in BUILD_DIR/kcc, so the fuzzer checks the parsing code without
# rebuilding MLIR-heavy files under sanitizers. Seeds are the real Keras
# fixtures; crashes land in BUILD_DIR/artifacts. Needs: apt install clang-19
# libclang-rt-19-dev (plus the build deps of scripts/install-deps.sh).
set -euo pipefail

SECONDS_TO_RUN="${1:-600}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$(realpath -m "${2:-$ROOT/build-fuzz-keras}")"
# KCC_BUILD may name an existing Release build of kcc to link against.
KCC_BUILD="${KCC_BUILD:-$OUT/kcc}"
mkdir -p "$OUT/obj" "$OUT/corpus" "$OUT/artifacts"

[ -f "$KCC_BUILD/build.ninja" ] ||
  cmake -G Ninja "$ROOT" -B "$KCC_BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C "$KCC_BUILD" -j2 KCCFrontend

CXXFLAGS=(-std=c++17 -O1 -g -fno-omit-frame-pointer
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
  -I"$ROOT" -I"$KCC_BUILD" -isystem /usr/lib/llvm-19/include
  $(pkg-config --cflags libzip hdf5))
OBJS=()
for src in "$ROOT"/frontend/keras/{SpecReader,LayerSpecs,ModelSpec,CompileSpec}.cpp \
           "$ROOT"/frontend/keras/fuzz/KerasJsonFuzzer.cpp; do
  obj="$OUT/obj/$(basename "${src%.cpp}").o"
  if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ]; then
    echo "fuzz-keras: compiling $(basename "$src")"
    clang++-19 "${CXXFLAGS[@]}" -c "$src" -o "$obj"
  fi
  OBJS+=("$obj")
done
clang++-19 -fsanitize=fuzzer,address,undefined "${OBJS[@]}" \
  "$KCC_BUILD/frontend/libKCCFrontend.a" "$KCC_BUILD/ir/libKCCIR.a" \
  "$KCC_BUILD/runtime/libKCCKernels.a" \
  -L/usr/lib/llvm-19/lib -Wl,-rpath,/usr/lib/llvm-19/lib -lMLIR -lLLVM \
  -ldnnl -lgomp -lpthread -ldl -o "$OUT/keras-json-fuzzer"

cp "$ROOT"/tests/fixtures/keras/*.json "$OUT/corpus/" 2>/dev/null || true
rm -f "$OUT/corpus/training.json"
echo "fuzz-keras: running for ${SECONDS_TO_RUN}s"
"$OUT/keras-json-fuzzer" "$OUT/corpus" -max_total_time="$SECONDS_TO_RUN" \
  -max_len=16384 -rss_limit_mb=4096 -timeout=10 \
  -artifact_prefix="$OUT/artifacts/" -print_final_stats=1
