// RUN: kcc --emit=llvm-mlir %S/Inputs/dense.mlir | FileCheck %s --check-prefix=DIALECT
// RUN: kcc --emit=llvm %S/Inputs/dense.mlir | FileCheck %s --check-prefix=IR
// RUN: kcc --emit=llvm --prefix=dense_ -O1 %S/Inputs/dense.mlir | FileCheck %s --check-prefix=PREFIX

// DIALECT-NOT: func.func
// DIALECT: llvm.func @train_step(%{{.*}}: !llvm.ptr
// DIALECT: llvm.call @kcc_rt_matmul_f32

// Bare pointers: 2 params, 4 Adam moments, iterations, lr, x, y, then the
// results (loss, 2 params, 4 moments, iterations).
// IR: declare void @kcc_rt_matmul_f32(ptr, ptr, ptr, i64
// IR: define void @train_step(ptr {{[^,]*}}, ptr
// IR: call void @kcc_rt_matmul_f32(

// PREFIX: define void @dense_forward(
// PREFIX: define void @dense_train_step(
