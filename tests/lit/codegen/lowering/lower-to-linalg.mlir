// RUN: kcc-opt %s --split-input-file --kc-lower-to-linalg | FileCheck %s

// Elementwise ops are linalg.generic with arith/math bodies; broadcast_to
// reads the bias through a map that drops the batch dim.
// CHECK-LABEL: func.func @dense_relu
// CHECK-SAME: bufferization.writable = false
// CHECK: call @kcc_rt_matmul_f32
// CHECK: linalg.generic {{.*}} ins(%arg2 : tensor<3xf32>)
// CHECK: arith.addf
// CHECK: arith.cmpf olt
// CHECK-NOT: kc.
func.func @dense_relu(%x: tensor<8x4xf32>, %w: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<8x3xf32> {
  %0 = kc.matmul %x, %w : tensor<8x4xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
  %1 = kc.broadcast_to %b : tensor<3xf32> -> tensor<8x3xf32>
  %2 = kc.add %0, %1 : tensor<8x3xf32>
  %3 = kc.relu %2 : tensor<8x3xf32>
  return %3 : tensor<8x3xf32>
}

// -----

// Library calls take pointers and i64 dims and attributes.
// CHECK-LABEL: func.func private @kcc_rt_conv2d_f64(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64
// CHECK-LABEL: func.func @conv
// CHECK: bufferization.to_memref
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<1x4x4x2xf64>
// CHECK: call @kcc_rt_conv2d_f64
// CHECK: bufferization.to_tensor {{.*}} restrict writable
func.func @conv(%x: tensor<1x8x8x3xf64>, %w: tensor<3x3x3x2xf64>) -> tensor<1x4x4x2xf64> {
  %0 = kc.conv2d %x, %w {padding = #kc<padding same>, strides = array<i64: 2, 2>} : tensor<1x8x8x3xf64>, tensor<3x3x3x2xf64> -> tensor<1x4x4x2xf64>
  return %0 : tensor<1x4x4x2xf64>
}

// -----

// Reductions: a filled init and a reduction iterator; keepdims expands.
// CHECK-LABEL: func.func @mean_keepdims
// CHECK: linalg.fill
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.mulf
// CHECK: tensor.expand_shape
func.func @mean_keepdims(%x: tensor<4x5xf32>) -> tensor<4x1xf32> {
  %0 = kc.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : tensor<4x5xf32> -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

// Softmax: running max, exp(x - max), sum, scale by 1/sum.
// CHECK-LABEL: func.func @softmax
// CHECK: arith.cmpf ogt
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: arith.mulf
func.func @softmax(%x: tensor<2x10xf32>) -> tensor<2x10xf32> {
  %0 = kc.softmax %x : tensor<2x10xf32>
  return %0 : tensor<2x10xf32>
}

// -----

// Layout ops: transpose, strided slice, concat.
// CHECK-LABEL: func.func @layout
// CHECK: linalg.transpose {{.*}} permutation = [1, 0]
// CHECK: tensor.extract_slice {{.*}}[0, 1] [4, 2] [1, 2]
// CHECK: tensor.insert_slice
// CHECK: tensor.insert_slice
func.func @layout(%x: tensor<4x6xf32>) -> (tensor<6x4xf32>, tensor<4x2xf32>, tensor<4x12xf32>) {
  %t = kc.transpose %x {perm = array<i64: 1, 0>} : tensor<4x6xf32> -> tensor<6x4xf32>
  %s = kc.slice %x {start = array<i64: 0, 1>, limit = array<i64: 4, 5>, strides = array<i64: 1, 2>} : tensor<4x6xf32> -> tensor<4x2xf32>
  %c = kc.concat %x, %x {axis = 1 : i64} : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x12xf32>
  return %t, %s, %c : tensor<6x4xf32>, tensor<4x2xf32>, tensor<4x12xf32>
}

// -----

// random_uniform is generated: splitmix64 on the flat index.
// CHECK-LABEL: func.func @dropout_mask
// CHECK: linalg.index
// CHECK: arith.shrui
// CHECK: arith.uitofp
func.func @dropout_mask(%step: tensor<i64>) -> tensor<4x8xf32> {
  %0 = kc.random_uniform %step {seed = 7 : i64} : tensor<i64> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
