#!/usr/bin/env bash
#===- setup_venv.sh - A virtualenv with PyTorch for the peer benchmarks ---===#
#
# Usage: benchmarks/peers/setup_venv.sh [VENV_DIR]   (default: $KCC_PEER_VENV
#        or /tmp/kcc-peer-venv)
#
# Creates VENV_DIR with torch (CPU use only) and numpy from plain PyPI. Only
# PyPI is reachable here, so the CPU-only wheel index is not an option: the
# PyPI wheel for Linux x86_64 also pulls the CUDA runtime packages (several
# GB). The benchmarks never use them. Idempotent: a venv that already imports
# torch is left alone. Never needed by the build or the tests.
#
#===----------------------------------------------------------------------===#
set -euo pipefail

venv="${1:-${KCC_PEER_VENV:-/tmp/kcc-peer-venv}}"

if [[ -x "$venv/bin/python" ]] &&
   "$venv/bin/python" -c 'import torch' 2>/dev/null; then
  echo "setup_venv: $venv already has torch $("$venv/bin/python" -c \
    'import torch; print(torch.__version__)')"
  exit 0
fi

python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
# --no-cache-dir: the wheels are large and a second copy in ~/.cache would
# only eat disk.
"$venv/bin/python" -m pip install --no-cache-dir --quiet torch numpy
"$venv/bin/python" -c 'import torch; print("setup_venv: torch", torch.__version__)'
