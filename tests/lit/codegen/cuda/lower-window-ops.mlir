// RUN: kcc-opt %s --split-input-file --kc-cuda-lower-window-ops | FileCheck %s

// A same-padded strided convolution: one zero pad, one generic whose input
// map reads the padded input at oh*2 + kh.
// CHECK-LABEL: func.func @conv
// CHECK: tensor.pad
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]
// CHECK-NOT: kc.conv2d
func.func @conv(%x: tensor<1x8x8x2xf32>, %w: tensor<3x3x2x4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = kc.conv2d %x, %w {padding = #kc<padding same>, strides = array<i64: 2, 2>} : tensor<1x8x8x2xf32>, tensor<3x3x2x4xf32> -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// -----

// The max-pool gradient: a first-maximum (value, position) generic, then a
// gather that reads each touching window's winner.
// CHECK-LABEL: func.func @max_pool_grad
// CHECK: linalg.generic
// CHECK: arith.cmpf ogt
// CHECK: linalg.generic
// CHECK: tensor.extract
// CHECK-NOT: kc.max_pool2d_grad
func.func @max_pool_grad(%x: tensor<1x4x4x2xf32>, %dy: tensor<1x2x2x2xf32>) -> tensor<1x4x4x2xf32> {
  %0 = kc.max_pool2d_grad %x, %dy {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x4x4x2xf32>, tensor<1x2x2x2xf32> -> tensor<1x4x4x2xf32>
  return %0 : tensor<1x4x4x2xf32>
}
