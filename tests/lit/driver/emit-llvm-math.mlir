// The f32 exp, log and erf of a training step (gelu, sigmoid, exp, log,
// softmax and the crossentropy's log) are kc-expand-math's arithmetic in the
// emitted LLVM IR: no libm call and no llvm.exp / llvm.log intrinsic (each
// would be one call per vector lane), and vector fmas in their place.
// RUN: kcc --emit=llvm %S/Inputs/math-activations.mlir | FileCheck %s

// CHECK-NOT: @{{(expf|logf|erff|log1pf|expm1f|llvm\.exp\.|llvm\.log\.)}}
// CHECK: define void @train_step(
// CHECK: call <{{[0-9]+}} x float> @llvm.fma.v{{[0-9]+}}f32(
// CHECK-NOT: @{{(expf|logf|erff|log1pf|expm1f|llvm\.exp\.|llvm\.log\.)}}
