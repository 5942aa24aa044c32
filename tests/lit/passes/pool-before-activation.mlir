// RUN: kcc-opt %s --split-input-file --kc-pool-before-activation | FileCheck %s
// The import pipeline runs it, so kcc's --emit=kc shows it too.
// RUN: kcc-opt %s --split-input-file --kc-import-pipeline | FileCheck %s

// A Conv2D(activation="relu") + MaxPooling2D: the pooling reads the
// convolution's biased output, relu the pooled tensor.

// CHECK-LABEL: func.func @conv_relu_pool
// CHECK: %[[S:.*]] = kc.add
// CHECK-NEXT: %[[P:.*]] = kc.max_pool2d %[[S]] {padding = #kc<padding same>, strides = array<i64: 2, 2>, window = array<i64: 3, 3>} : tensor<2x6x6x4xf32> -> tensor<2x3x3x4xf32>
// CHECK-NEXT: %[[R:.*]] = kc.relu %[[P]] : tensor<2x3x3x4xf32>
// CHECK-NEXT: return %[[R]]
func.func @conv_relu_pool(%x: tensor<2x8x8x2xf32>, %w: tensor<3x3x2x4xf32>, %b: tensor<4xf32>) -> tensor<2x3x3x4xf32> {
  %c = kc.conv2d %x, %w : tensor<2x8x8x2xf32>, tensor<3x3x2x4xf32> -> tensor<2x6x6x4xf32>
  %bb = kc.broadcast_to %b : tensor<4xf32> -> tensor<2x6x6x4xf32>
  %s = kc.add %c, %bb : tensor<2x6x6x4xf32>
  %h = kc.relu %s : tensor<2x6x6x4xf32>
  %p = kc.max_pool2d %h {window = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = #kc<padding same>} : tensor<2x6x6x4xf32> -> tensor<2x3x3x4xf32>
  return %p : tensor<2x3x3x4xf32>
}

// -----

// relu's output is also a result: it is computed anyway, and stays.

// CHECK-LABEL: func.func @relu_also_returned
// CHECK: %[[H:.*]] = kc.relu %{{.*}} : tensor<2x4x4x3xf32>
// CHECK-NEXT: kc.max_pool2d %[[H]]
// CHECK-NOT: kc.relu
func.func @relu_also_returned(%x: tensor<2x6x6x2xf32>, %w: tensor<3x3x2x3xf32>) -> (tensor<2x4x4x3xf32>, tensor<2x2x2x3xf32>) {
  %s = kc.conv2d %x, %w : tensor<2x6x6x2xf32>, tensor<3x3x2x3xf32> -> tensor<2x4x4x3xf32>
  %h = kc.relu %s : tensor<2x4x4x3xf32>
  %p = kc.max_pool2d %h {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x4x4x3xf32> -> tensor<2x2x2x3xf32>
  return %h, %p : tensor<2x4x4x3xf32>, tensor<2x2x2x3xf32>
}

// -----

// Average pooling does not commute with relu: left alone.

// CHECK-LABEL: func.func @avg_pool_stays
// CHECK: kc.relu
// CHECK-NEXT: kc.avg_pool2d
func.func @avg_pool_stays(%x: tensor<2x6x6x2xf32>, %w: tensor<3x3x2x3xf32>) -> tensor<2x2x2x3xf32> {
  %s = kc.conv2d %x, %w : tensor<2x6x6x2xf32>, tensor<3x3x2x3xf32> -> tensor<2x4x4x3xf32>
  %h = kc.relu %s : tensor<2x4x4x3xf32>
  %p = kc.avg_pool2d %h {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x4x4x3xf32> -> tensor<2x2x2x3xf32>
  return %p : tensor<2x2x2x3xf32>
}

// -----

// relu on a normalization (any op but a convolution) joins the kernel that
// computes its input: left alone.

// CHECK-LABEL: func.func @normalized_relu_stays
// CHECK: kc.relu
// CHECK-NEXT: kc.max_pool2d
func.func @normalized_relu_stays(%s: tensor<2x4x4x3xf32>, %g: tensor<2x4x4x3xf32>) -> tensor<2x2x2x3xf32> {
  %n = kc.mul %s, %g : tensor<2x4x4x3xf32>
  %h = kc.relu %n : tensor<2x4x4x3xf32>
  %p = kc.max_pool2d %h {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<2x4x4x3xf32> -> tensor<2x2x2x3xf32>
  return %p : tensor<2x2x2x3xf32>
}
