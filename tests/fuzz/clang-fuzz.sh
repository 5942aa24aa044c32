#!/usr/bin/env bash
# The compile and link launcher of the fuzz targets (tests/fuzz/CMakeLists.txt):
#   clang-fuzz.sh CLANG compile|link CONFIGURED_COMPILER ARGS...
# drops the configured compiler and runs CLANG on the same arguments, with
# libFuzzer, ASan and UBSan instrumentation. Only the fuzz targets' own
# sources go through it; the libraries they link come from the normal build.
# -fopenmp is dropped: those sources use no OpenMP, and clang would link its
# own runtime where the build already links libomp.so.5 by path.
set -euo pipefail
clang=$1 mode=$2
shift 3
args=()
for a in "$@"; do
  [[ $a == -fopenmp ]] || args+=("$a")
done
san=(-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined)
if [[ $mode == compile ]]; then
  launcher=()
  command -v ccache >/dev/null && launcher=(ccache)
  # Line tables are all a sanitizer report needs; full debug info of the
  # MLIR-heavy sources costs much more to build.
  exec "${launcher[@]}" "$clang" "${args[@]}" -O1 -gline-tables-only \
    -fno-omit-frame-pointer "${san[@]}"
fi
exec "$clang" "${args[@]}" "${san[@]}"
