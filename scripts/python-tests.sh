#!/usr/bin/env bash
# The Python package's tests (ctest python_package, python_package_tensorflow):
# a virtualenv per Keras backend cached in the build folder with keras, the
# backend, pytest and numpy from PyPI, the package installed from python/
# as a user installs it (`pip install ./python`, its _kcc module taken from
# the build), then pytest over python/tests with KERAS_BACKEND set.
#   [KERAS_BACKEND=jax|tensorflow|torch] scripts/python-tests.sh BUILD_DIR [pytest args...]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$(cd "${1:?usage: python-tests.sh BUILD_DIR}" && pwd)"
shift
export KERAS_BACKEND="${KERAS_BACKEND:-jax}"
case "$KERAS_BACKEND" in
  jax) BACKEND_PACKAGES=(jax) ;;
  tensorflow) BACKEND_PACKAGES=(tensorflow-cpu) ;;
  torch) BACKEND_PACKAGES=(torch) ;;
  *) echo "python-tests.sh: unknown KERAS_BACKEND '$KERAS_BACKEND'" >&2; exit 2 ;;
esac
VENV="$BUILD/python-venv-$KERAS_BACKEND"
PIP=("$VENV/bin/pip" install -q --disable-pip-version-check)
if [ ! -x "$VENV/bin/pytest" ]; then
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "${PIP[@]}" keras==3.15.1 "${BACKEND_PACKAGES[@]}" pytest numpy
fi
# ctest -j runs both backends' tests at once, and pip builds the package in
# python/build: one install (and its clean-up) at a time.
(
  flock 9
  KCC_BUILD_DIR="$BUILD" "${PIP[@]}" --no-deps --force-reinstall "$ROOT/python"
  rm -rf "$ROOT/python/build" "$ROOT/python/kcc.egg-info"
) 9>"$BUILD/python-install.lock"
# test_same_step.py compares the package's compile with the tool's.
export KCC_BIN="$BUILD/bin/kcc"
# Run from the tests' folder: `kcc` must come from the installed package.
cd "$ROOT/python/tests"
if [ $# -eq 0 ]; then
  set -- .
fi
exec "$VENV/bin/python" -m pytest -q -p no:cacheprovider \
  -W ignore::DeprecationWarning "$@"
