#!/usr/bin/env bash
# The Python package's tests (ctest python_package): a virtualenv cached in
# the build folder with keras, jax, pytest and numpy from PyPI, the package
# installed from python/ as a user installs it (`pip install ./python`, its
# _kcc module taken from the build), then pytest over python/tests.
#   scripts/python-tests.sh BUILD_DIR [pytest args...]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$(cd "${1:?usage: python-tests.sh BUILD_DIR}" && pwd)"
shift
VENV="$BUILD/python-venv"
PIP=("$VENV/bin/pip" install -q --disable-pip-version-check)
if [ ! -x "$VENV/bin/pytest" ]; then
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "${PIP[@]}" keras==3.15.1 jax pytest numpy
fi
KCC_BUILD_DIR="$BUILD" "${PIP[@]}" --no-deps --force-reinstall "$ROOT/python"
rm -rf "$ROOT/python/build" "$ROOT/python/kcc.egg-info"
# Run from the tests' folder: `kcc` must come from the installed package.
cd "$ROOT/python/tests"
export KERAS_BACKEND="${KERAS_BACKEND:-jax}"
exec "$VENV/bin/python" -m pytest -q -p no:cacheprovider \
  -W ignore::DeprecationWarning "$@" .
