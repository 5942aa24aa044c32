// RUN: rm -rf %t && mkdir -p %t
// RUN: kcc --emit=obj --dump-dir=%t/dump %S/Inputs/dense.mlir -o %t/step.o
// RUN: ls %t/dump | FileCheck %s
// RUN: FileCheck %s --check-prefix=TRAIN < %t/dump/02-train.mlir
// RUN: FileCheck %s --check-prefix=LL < %t/dump/06-llvm.ll
// Only the stages reached are written.
// RUN: rm -rf %t/dump && kcc --emit=train --dump-dir=%t/dump %S/Inputs/dense.mlir > /dev/null
// RUN: ls %t/dump | FileCheck %s --check-prefix=TWO
// RUN: rm -rf %t/dump && kcc --emit=linalg --dump-dir=%t/dump %S/Inputs/dense.mlir > /dev/null
// RUN: ls %t/dump | FileCheck %s --check-prefix=THREE

// CHECK: 01-kc.mlir
// CHECK-NEXT: 02-train.mlir
// CHECK-NEXT: 03-linalg.mlir
// CHECK-NEXT: 04-fused.mlir
// CHECK-NEXT: 05-llvm.mlir
// CHECK-NEXT: 06-llvm.ll

// TRAIN: func.func @train_step
// LL: define void @train_step(

// TWO: 01-kc.mlir
// TWO-NEXT: 02-train.mlir
// TWO-NOT: 03

// THREE: 03-linalg.mlir
// THREE-NOT: 04
