#!/usr/bin/env bash
# Configures and builds kcc into build/ (Release, Ninja, all cores).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${KCC_BUILD_DIR:-$ROOT/build}"
bash "$ROOT/scripts/install-deps.sh"
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -G Ninja -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
ninja -C "$BUILD" -j "$(nproc)" "$@"
