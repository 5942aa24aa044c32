// RUN: kcc-opt %s --split-input-file --verify-diagnostics | FileCheck %s

// Attention's two products: scores q k^T and the weighted sum of values.
// CHECK-LABEL: func.func @attention
func.func @attention(%q: tensor<4x5x3xf32>, %k: tensor<4x6x3xf32>, %v: tensor<4x6x2xf32>) -> tensor<4x5x2xf32> {
  // CHECK: kc.batch_matmul %{{.*}}, %{{.*}} {transpose_rhs = true} : tensor<4x5x3xf32>, tensor<4x6x3xf32> -> tensor<4x5x6xf32>
  %s = kc.batch_matmul %q, %k {transpose_rhs = true} : tensor<4x5x3xf32>, tensor<4x6x3xf32> -> tensor<4x5x6xf32>
  // CHECK: kc.batch_matmul %{{.*}}, %{{.*}} : tensor<4x5x6xf32>, tensor<4x6x2xf32> -> tensor<4x5x2xf32>
  %o = kc.batch_matmul %s, %v : tensor<4x5x6xf32>, tensor<4x6x2xf32> -> tensor<4x5x2xf32>
  return %o : tensor<4x5x2xf32>
}

// -----

func.func @batch_mismatch(%a: tensor<4x5x3xf32>, %b: tensor<2x3x6xf32>) {
  // expected-error @+1 {{'kc.batch_matmul' op expects the batch dims to match: lhs [4, 5, 3], rhs [2, 3, 6]}}
  %0 = kc.batch_matmul %a, %b : tensor<4x5x3xf32>, tensor<2x3x6xf32> -> tensor<4x5x6xf32>
  return
}

// -----

func.func @inner_mismatch(%a: tensor<4x5x3xf32>, %b: tensor<4x6x3xf32>) {
  // expected-error @+1 {{expects lhs columns (3) to match rhs rows (6)}}
  %0 = kc.batch_matmul %a, %b : tensor<4x5x3xf32>, tensor<4x6x3xf32> -> tensor<4x5x3xf32>
  return
}

// -----

func.func @rank(%a: tensor<5x3xf32>, %b: tensor<3x6xf32>) {
  // expected-error @+1 {{expects 3-D operands [batch, rows, cols], got lhs [5, 3] and rhs [3, 6]}}
  %0 = kc.batch_matmul %a, %b : tensor<5x3xf32>, tensor<3x6xf32> -> tensor<5x6xf32>
  return
}

// -----

func.func @result(%a: tensor<4x3x5xf32>, %b: tensor<4x3x6xf32>) {
  // expected-error @+1 {{'kc.batch_matmul' op result shape [4, 6, 6] does not match the expected [4, 5, 6]}}
  %0 = kc.batch_matmul %a, %b {transpose_lhs = true} : tensor<4x3x5xf32>, tensor<4x3x6xf32> -> tensor<4x6x6xf32>
  return
}
