#!/usr/bin/env bash
# The README's main job: build kcc, then train the bundled Keras spec of the
# reference MLP (examples/mlp.json: 784-128-64-10, relu/relu/softmax, Adam,
# batch 32) for one epoch on Fashion-MNIST, compiled and then interpreted op
# by op from the same initial weights: prints both test accuracies and the
# step-time ratio. Extra arguments go to `kcc train` (e.g. --epochs 3).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${KCC_BUILD_DIR:-$ROOT/build}"
bash "$ROOT/scripts/build.sh" kcc
"$BUILD/bin/kcc" train "$ROOT/examples/mlp.json" --data fashion-mnist \
  --epochs 1 --batch 32 --mode=both "$@"
