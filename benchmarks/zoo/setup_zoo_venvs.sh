#!/usr/bin/env bash
#===- setup_zoo_venvs.sh - Keras 3 on JAX, TensorFlow and PyTorch ---------===#
#
# Usage: benchmarks/zoo/setup_zoo_venvs.sh [DIR]   (default: $KCC_ZOO_VENVS
#        or /tmp/kcc-zoo)
#
# Three venvs from plain PyPI, one per Keras backend, each with the same
# Keras 3 release: DIR/jax (jax), DIR/tf (tensorflow-cpu), DIR/torch (torch;
# PyPI's Linux wheel also pulls CUDA runtime packages, unused here).
# Idempotent: a venv that already imports its packages is left alone. Never
# needed by the build or the tests.
#
#===----------------------------------------------------------------------===#
set -euo pipefail

dir="${1:-${KCC_ZOO_VENVS:-/tmp/kcc-zoo}}"
keras="keras==3.15.1"
mkdir -p "$dir"
for kind in jax tf torch; do
  case "$kind" in
    jax) pkgs=(jax); backend=jax; check='import jax, keras' ;;
    tf) pkgs=(tensorflow-cpu); backend=tensorflow; check='import tensorflow, keras' ;;
    torch) pkgs=(torch); backend=torch; check='import torch, keras' ;;
  esac
  export KERAS_BACKEND=$backend
  venv="$dir/$kind"
  if [[ -x "$venv/bin/python" ]] && "$venv/bin/python" -c "$check" 2>/dev/null; then
    echo "setup_zoo_venvs: $venv ready"
    continue
  fi
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --upgrade pip
  "$venv/bin/python" -m pip install --no-cache-dir --quiet "${pkgs[@]}" \
    "$keras" h5py numpy
  "$venv/bin/python" -c "$check" && echo "setup_zoo_venvs: $venv ready"
done
