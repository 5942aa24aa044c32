// RUN: kcc --emit=linalg %S/Inputs/dense.mlir | FileCheck %s

// kc is gone; GEMMs are library calls, the rest fused linalg.generic ops.
// CHECK-NOT: kc.matmul
// CHECK-LABEL: func.func @train_step
// CHECK: call @kcc_rt_matmul_f32
// CHECK: linalg.generic
