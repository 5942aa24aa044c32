// RUN: kcc --emit=kc %s | FileCheck %s
// RUN: kcc --model=mlp --batch 8 | FileCheck %s --check-prefix=MLP
// RUN: kcc --emit=kc %kcc_src/tests/fixtures/keras/mlp_keras3.json | FileCheck %s --check-prefix=KERAS

// --emit=kc is the default: the verified, canonicalized @forward.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: {kc.name = "w", kc.trainable = true}
// CHECK-NOT: kc.constant
// CHECK: kc.matmul
// CHECK-NOT: kc.matmul
func.func @forward(%w: tensor<8x2xf32> {kc.name = "w", kc.trainable = true},
                   %x: tensor<4x8xf32> {kc.input = 0 : i64}) -> tensor<4x2xf32> {
  %dead = kc.constant dense<2.0> : tensor<4x2xf32>
  %a = kc.matmul %x, %w : tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4x2xf32>
  %b = kc.matmul %x, %w : tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4x2xf32>
  %c = kc.add %a, %b : tensor<4x2xf32>
  return %c : tensor<4x2xf32>
}

// A reference model, traced at --batch.
// MLP-LABEL: func.func @forward
// MLP-SAME: tensor<784x128xf32> {kc.name = "dense/kernel", kc.trainable = true}
// MLP-SAME: tensor<8x28x28x1xf32> {kc.input = 0 : i64}
// MLP: kc.softmax
// MLP-SAME: tensor<8x10xf32>

// A Keras spec goes through the importer.
// KERAS-LABEL: func.func @forward
// KERAS-SAME: kc.input = 0
// KERAS: kc.matmul
