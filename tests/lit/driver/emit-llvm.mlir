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

// --llvm-passes runs another LLVM IR pipeline (opt's -passes syntax) in
// place of kcc's kernel pipeline; a pipeline LLVM cannot parse is an error
// that names it, and no output is written.
// RUN: kcc --emit=llvm --llvm-passes='default<O3>' %S/Inputs/dense.mlir | FileCheck %s --check-prefix=IR
// RUN: not kcc --emit=obj --llvm-passes='bogus' %S/Inputs/dense.mlir -o %t.o 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not test -e %t.o
// BAD: kcc: error: LLVM pipeline 'bogus': unknown pass name 'bogus'
