#!/usr/bin/env bash
# Installs every Debian package kcc's build, tests and demo need. Idempotent:
# prints nothing and returns at once when all are present. Needs root (or sudo).
set -euo pipefail

PACKAGES=(
  cmake ninja-build g++ python3
  llvm-19-dev libmlir-19-dev mlir-19-tools llvm-19-tools
  libdnnl-dev libgtest-dev libbenchmark-dev zlib1g-dev
  libzip-dev libhdf5-dev pkg-config libomp5-14
  ocl-icd-opencl-dev opencl-headers
  clang-19 libclang-rt-19-dev clang-format-19
  dataset-fashion-mnist
  # cpack -G DEB (the debian_package test): dpkg-shlibdeps, file, objdump.
  dpkg-dev file binutils
  # Data-parallel training (kcc train under mpirun, the MPI tests).
  openmpi-bin libopenmpi-dev
  # The Python package (python/): its pybind11 module and the test venv.
  pybind11-dev python3-dev python3-venv
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "kcc: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
