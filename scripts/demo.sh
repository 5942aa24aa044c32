#!/usr/bin/env bash
# The README's main job: build kcc, then train the bundled reference MLP
# (784-128-64-10, relu/relu/softmax, Adam, batch 32) for one epoch on
# Fashion-MNIST through the JIT (kcc::jit, examples/embed/train_mlp.cpp) and
# time the same step interpreted op by op: prints the test accuracy and the
# compiled vs interpreted step-time ratio.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${KCC_BUILD_DIR:-$ROOT/build}"
bash "$ROOT/scripts/build.sh" kcc-example-train-mlp
"$BUILD/bin/kcc-example-train-mlp" "$@"
