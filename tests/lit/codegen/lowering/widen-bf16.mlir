// RUN: kcc-opt %s --split-input-file --kc-widen-bf16 | FileCheck %s
// RUN: kcc-opt %s --split-input-file --kc-expand-bf16 | FileCheck %s --check-prefix=EXPAND

// A mixed-precision Dense: the product stays bf16 (oneDNN's bf16 GEMM),
// the bias add and relu compute in f32 between casts, and the casts of the
// frontend (f32 weights read as bf16) are left alone.
// CHECK-LABEL: func.func @dense
// CHECK: %[[W:.*]] = kc.cast %arg1 : tensor<4x3xf32> -> tensor<4x3xbf16>
// CHECK: %[[P:.*]] = kc.matmul %arg0, %[[W]] : tensor<2x4xbf16>, tensor<4x3xbf16> -> tensor<2x3xbf16>
// CHECK: %[[PW:.*]] = kc.cast %[[P]] : tensor<2x3xbf16> -> tensor<2x3xf32>
// CHECK: %[[BW:.*]] = kc.cast %{{.*}} : tensor<2x3xbf16> -> tensor<2x3xf32>
// CHECK: %[[S:.*]] = kc.add %[[PW]], %[[BW]] : tensor<2x3xf32>
// CHECK: %[[SN:.*]] = kc.cast %[[S]] : tensor<2x3xf32> -> tensor<2x3xbf16>
// CHECK: %[[SW:.*]] = kc.cast %[[SN]] : tensor<2x3xbf16> -> tensor<2x3xf32>
// CHECK: %[[R:.*]] = kc.relu %[[SW]] : tensor<2x3xf32>
// CHECK: %[[RN:.*]] = kc.cast %[[R]] : tensor<2x3xf32> -> tensor<2x3xbf16>
// CHECK: return %[[RN]]
func.func @dense(%x: tensor<2x4xbf16>, %w: tensor<4x3xf32>,
                 %b: tensor<2x3xbf16>) -> tensor<2x3xbf16> {
  %wb = kc.cast %w : tensor<4x3xf32> -> tensor<4x3xbf16>
  %p = kc.matmul %x, %wb : tensor<2x4xbf16>, tensor<4x3xbf16> -> tensor<2x3xbf16>
  %s = kc.add %p, %b : tensor<2x3xbf16>
  %r = kc.relu %s : tensor<2x3xbf16>
  return %r : tensor<2x3xbf16>
}

// -----

// A sum over the batch (a bias gradient) accumulates in f32 and rounds once.
// CHECK-LABEL: func.func @bias_grad
// CHECK: %[[W:.*]] = kc.cast %arg0 : tensor<8x3xbf16> -> tensor<8x3xf32>
// CHECK: %[[S:.*]] = kc.reduce_sum %[[W]] {{.*}} : tensor<8x3xf32> -> tensor<3xf32>
// CHECK: kc.cast %[[S]] : tensor<3xf32> -> tensor<3xbf16>
func.func @bias_grad(%g: tensor<8x3xbf16>) -> tensor<3xbf16> {
  %s = kc.reduce_sum %g {axes = array<i64: 0>} : tensor<8x3xbf16> -> tensor<3xbf16>
  return %s : tensor<3xbf16>
}

// -----

// EXPAND-LABEL: func.func @casts
// EXPAND-NOT: arith.extf
// EXPAND-NOT: arith.truncf
// EXPAND: arith.shli
// EXPAND: arith.bitcast
func.func @casts(%x: bf16, %y: vector<8xf32>) -> (f32, vector<8xbf16>) {
  %a = arith.extf %x : bf16 to f32
  %b = arith.truncf %y : vector<8xf32> to vector<8xbf16>
  return %a, %b : f32, vector<8xbf16>
}
