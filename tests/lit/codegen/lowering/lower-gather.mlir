// RUN: kcc-opt %s --split-input-file --kc-lower-to-linalg | FileCheck %s

// A 2-D table and flat ids call the kernel directly; the index type is in
// the name.
// CHECK-LABEL: func.func private @kcc_rt_gather_i64_f32(!llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64)
// CHECK-LABEL: func.func @flat
// CHECK: call @kcc_rt_gather_i64_f32
// CHECK-NOT: kc.
func.func @flat(%t: tensor<10x4xf32>, %i: tensor<6xi64>) -> tensor<6x4xf32> {
  %0 = kc.gather %t, %i : tensor<10x4xf32>, tensor<6xi64> -> tensor<6x4xf32>
  return %0 : tensor<6x4xf32>
}

// -----

// Batched ids [N, T] are reshaped around the 2-D call, in both directions.
// CHECK-LABEL: func.func @batched
// CHECK: call @kcc_rt_gather_i32_f32
// CHECK: call @kcc_rt_gather_grad_i32_f32
// CHECK-NOT: kc.
func.func @batched(%t: tensor<10x4xf32>, %i: tensor<2x3xi32>, %g: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<10x4xf32>) {
  %0 = kc.gather %t, %i : tensor<10x4xf32>, tensor<2x3xi32> -> tensor<2x3x4xf32>
  %1 = kc.gather_grad %i, %g : tensor<2x3xi32>, tensor<2x3x4xf32> -> tensor<10x4xf32>
  return %0, %1 : tensor<2x3x4xf32>, tensor<10x4xf32>
}
