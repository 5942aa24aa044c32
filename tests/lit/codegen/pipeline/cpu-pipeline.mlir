// RUN: kcc-opt %s --kc-cpu-pipeline | FileCheck %s
// RUN: kcc-opt %s --kc-cpu-pipeline="fuse-epilogues=false" | FileCheck %s --check-prefix=LOOPS

// The whole CPU pipeline: a bare-pointer entry whose result is a trailing
// out-param. Bias + relu run inside the GEMM (oneDNN post-ops), which writes
// straight into the caller's buffer: one kernel, no intermediate buffer.
// CHECK-LABEL: llvm.func @dense_relu(%arg0: !llvm.ptr, %arg1: !llvm.ptr, %arg2: !llvm.ptr, %arg3: !llvm.ptr)
// CHECK-SAME: kc.kernels = 1
// CHECK: llvm.call @kcc_rt_matmul_epilogue_f32(%{{.*}}) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, f64) -> ()
// CHECK-NOT: llvm.fcmp
// CHECK-NOT: llvm.call @free

// Without epilogue fusion: the GEMM as a library call, fused bias + relu as
// loops, and the product's buffer freed.
// LOOPS-LABEL: llvm.func @dense_relu
// LOOPS: llvm.call @kcc_rt_matmul_f32
// LOOPS: llvm.fcmp "olt"
// LOOPS: llvm.call @free
// LOOPS-NOT: linalg.
func.func @dense_relu(%x: tensor<8x4xf32>, %w: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<8x3xf32> {
  %0 = kc.matmul %x, %w : tensor<8x4xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
  %1 = kc.broadcast_to %b : tensor<3xf32> -> tensor<8x3xf32>
  %2 = kc.add %0, %1 : tensor<8x3xf32>
  %3 = kc.relu %2 : tensor<8x3xf32>
  return %3 : tensor<8x3xf32>
}
