// RUN: rm -rf %t && mkdir -p %t
// RUN: kcc --emit=obj --data-parallel --dump-dir=%t/dump %S/Inputs/dense.mlir -o %t/step.o
// RUN: FileCheck %s --check-prefix=TRAIN < %t/dump/02-train.mlir
// RUN: FileCheck %s --check-prefix=LINALG < %t/dump/03-linalg.mlir
// RUN: FileCheck %s --check-prefix=LL < %t/dump/06-llvm.ll
// RUN: kcc --emit=train %S/Inputs/dense.mlir | FileCheck %s --check-prefix=ONE

// --data-parallel (what kcc train does under mpirun): the gradients are
// averaged over the ranks in buckets started during the reverse sweep and
// waited for before Adam, and the collective stays visible down to the
// runtime calls.

// TRAIN-LABEL: func.func @train_step
// TRAIN: kc.all_reduce_start "mean"
// TRAIN: kc.all_reduce_wait "mean"
// TRAIN: return

// LINALG: call @kcc_rt_all_reduce_start_f32(
// LINALG: call @kcc_rt_all_reduce_wait_f32(
// LL: call void @kcc_rt_all_reduce_start_f32(
// LL: call void @kcc_rt_all_reduce_wait_f32(

// ONE-NOT: kc.all_reduce
