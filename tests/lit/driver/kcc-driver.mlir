// RUN: kcc --emit=kc %s | FileCheck %s
// RUN: not kcc --emit=kc %S/Inputs/shape-error.mlir 2>&1 | FileCheck %s --check-prefix=ERR
// RUN: kcc --version | FileCheck %s --check-prefix=VERSION
// RUN: not kcc %t.missing.mlir 2>&1 | FileCheck %s --check-prefix=MISSING

// The import pipeline canonicalizes and CSEs what the frontend traced.
// CHECK-LABEL: func.func @forward
func.func @forward(%x: tensor<4x8xf32>, %w: tensor<8x2xf32>) -> tensor<4x2xf32> {
  // CHECK-COUNT-1: kc.matmul
  // CHECK-NOT: kc.constant
  %dead = kc.constant dense<2.0> : tensor<4x2xf32>
  %a = kc.matmul %x, %w : tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4x2xf32>
  %b = kc.matmul %x, %w : tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4x2xf32>
  // CHECK: kc.add %[[M:.*]], %[[M]]
  %c = kc.add %a, %b : tensor<4x2xf32>
  return %c : tensor<4x2xf32>
}

// ERR: shape-error.mlir:4:8: error: 'kc.matmul' op expects lhs columns (784) to match rhs rows (100)
// VERSION: kcc 0.1.0
// MISSING: kcc: error: cannot open input file
