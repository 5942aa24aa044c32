#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, and runs every
# unit and lit test through ctest.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${KCC_BUILD_DIR:-$ROOT/build}"
bash "$ROOT/scripts/build.sh"
cd "$BUILD"
ctest --output-on-failure -j "$(nproc)"
