#!/usr/bin/env bash
#===- setup_peer_venvs.sh - The JAX and TensorFlow venvs for the peers ----===#
#
# Usage: benchmarks/peers/setup_peer_venvs.sh jax|tf VENV_DIR
#
#   jax   jax (CPU), numpy                     -> benchmarks/peers/jax_train.py
#   tf    tensorflow-cpu, tf-keras, numpy      -> benchmarks/peers/keras_train.py
#
# From plain PyPI. Idempotent: a venv that already imports the packages is
# left alone (so an existing one can be pointed at with KCC_JAX_VENV /
# KCC_TF_VENV). The PyTorch venv is benchmarks/peers/setup_venv.sh's. Never
# needed by the build or the tests.
#
#===----------------------------------------------------------------------===#
set -euo pipefail

kind="$1"
venv="$2"
case "$kind" in
  jax) check='import jax'; pkgs=(jax numpy) ;;
  tf) check='import tensorflow, tf_keras'; pkgs=(tensorflow-cpu tf-keras numpy) ;;
  *) echo "usage: $0 jax|tf VENV_DIR" >&2; exit 2 ;;
esac

if [[ -x "$venv/bin/python" ]] && "$venv/bin/python" -c "$check" 2>/dev/null; then
  echo "setup_peer_venvs: $venv already has $kind"
  exit 0
fi
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --no-cache-dir --quiet "${pkgs[@]}"
"$venv/bin/python" -c "$check" && echo "setup_peer_venvs: $venv ready ($kind)"
