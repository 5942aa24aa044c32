// RUN: kcc --emit=linalg %S/Inputs/dense.mlir | FileCheck %s --check-prefix=LINALG
// RUN: kcc --emit=fused %S/Inputs/dense.mlir | FileCheck %s --check-prefix=FUSED

// Before fusion every elementwise kc op is its own single-result generic;
// after it, producers with several users are computed once inside their
// consumer, which also yields them (a multi-result generic).
// LINALG-LABEL: func.func @train_step
// LINALG-NOT: outs(%{{[a-z0-9_]+}}, %
// LINALG: call @kcc_rt_matmul_f32

// FUSED-LABEL: func.func @train_step
// FUSED: call @kcc_rt_matmul_f32
// FUSED: linalg.generic {{.*}} outs(%{{[a-z0-9_]+}}, %
