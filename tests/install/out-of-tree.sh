#!/usr/bin/env bash
# Installs kcc (cmake --install) into a temporary prefix, then configures,
# builds and runs examples/embed and examples/aot as standalone CMake
# projects against it: find_package(kcc REQUIRED), kcc::jit, kcc::runtime.
#
#   out-of-tree.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
BUILD="$1"
SRC="$2"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

cmake --install "$BUILD" --prefix "$TMP/prefix" >/dev/null
echo "installed into $TMP/prefix: $(find "$TMP/prefix" -type f | wc -l) files"
# The public headers are self-contained below include/kcc/.
test -f "$TMP/prefix/include/kcc/kcc.h"
test -f "$TMP/prefix/include/kcc/ir/KcOps.h.inc"
test -f "$TMP/prefix/lib/pkgconfig/kcc-runtime.pc"

# Configure and build quietly; show the log when a step fails.
quiet() { "$@" >"$TMP/log" 2>&1 || { cat "$TMP/log"; return 1; }; }
for example in embed aot; do
  quiet cmake -G Ninja -S "$SRC/examples/$example" -B "$TMP/$example" \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$TMP/prefix"
  quiet cmake --build "$TMP/$example" -j 2
done

# A few training steps with each: the JIT embedded in a program, and the
# AOT step with the runtime alone (no MLIR, no LLVM loaded).
"$TMP/embed/kcc-example-train-mlp"
# A user's layer class registered from the installed headers.
"$TMP/embed/kcc-example-custom-layer" \
  "$SRC/tests/fixtures/keras/custom/scaled_dense.keras" "$TMP/trained.keras"
"$TMP/aot/train_aot" 100
if ldd "$TMP/aot/train_aot" | grep -E 'libMLIR|libLLVM'; then
  echo "error: the AOT program loads MLIR or LLVM" >&2
  exit 1
fi
# kcc-runtime.pc describes the same runtime for non-CMake builds.
PKG_CONFIG_PATH="$TMP/prefix/lib/pkgconfig" pkg-config --libs kcc-runtime |
  grep -q -- -lKCCLibraryCalls
echo "out-of-tree examples: ok"
