// The ResNet fixture (BatchNormalization after every Conv2D, strided
// convolutions, Add, GlobalAveragePooling2D) trains in both modes from the
// same weights on the same batches to accuracies within 0.5 points: 20
// steps here, a smoke test of the moving statistics updated in the step and
// of predict's own inference @forward. One full epoch reaches 0.82
// (docs/frontend.md).
// RUN: kcc train %kcc_src/tests/fixtures/keras/resnet.keras --data fashion-mnist --mode=both --epochs 1 --steps-per-epoch 20 | FileCheck %s

// CHECK: compiled, batch 32
// CHECK: test accuracy: {{0\.[0-9]+}}
// CHECK: interpreted, batch 32
// CHECK: same initial weights, same batches:
// CHECK: accuracy differs by {{0\.[0-4][0-9]}} points
