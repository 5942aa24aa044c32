// RUN: kcc-opt %s --kc-cpu-pipeline | FileCheck %s

// The whole CPU pipeline: a bare-pointer entry whose result is a trailing
// out-param, the GEMM as a library call, fused bias + relu as loops, and
// every intermediate buffer freed.
// CHECK-LABEL: llvm.func @dense_relu(%arg0: !llvm.ptr, %arg1: !llvm.ptr, %arg2: !llvm.ptr, %arg3: !llvm.ptr)
// CHECK: llvm.call @kcc_rt_matmul_f32
// CHECK: llvm.fcmp "olt"
// CHECK: llvm.call @free
// CHECK-NOT: linalg.
func.func @dense_relu(%x: tensor<8x4xf32>, %w: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<8x3xf32> {
  %0 = kc.matmul %x, %w : tensor<8x4xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
  %1 = kc.broadcast_to %b : tensor<3xf32> -> tensor<8x3xf32>
  %2 = kc.add %0, %1 : tensor<8x3xf32>
  %3 = kc.relu %2 : tensor<8x3xf32>
  return %3 : tensor<8x3xf32>
}
