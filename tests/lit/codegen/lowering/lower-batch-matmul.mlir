// RUN: kcc-opt %s --kc-lower-to-linalg | FileCheck %s

// One library call (oneDNN's batched GEMM), the transposes as its flags.
// CHECK-LABEL: func.func private @kcc_rt_batch_matmul_f32(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64)
// CHECK-LABEL: func.func @scores
// CHECK: call @kcc_rt_batch_matmul_f32
// CHECK-NOT: kc.
func.func @scores(%q: tensor<8x5x3xf32>, %k: tensor<8x6x3xf32>) -> tensor<8x5x6xf32> {
  %s = kc.batch_matmul %q, %k {transpose_rhs = true} : tensor<8x5x3xf32>, tensor<8x6x3xf32> -> tensor<8x5x6xf32>
  return %s : tensor<8x5x6xf32>
}
