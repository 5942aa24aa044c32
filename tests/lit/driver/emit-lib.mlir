// RUN: rm -rf %t && mkdir -p %t
// RUN: kcc --emit=lib --prefix=dense_ %S/Inputs/dense.mlir -o %t/libdense.so
// RUN: llvm-nm -D --defined-only %t/libdense.so | FileCheck %s --check-prefix=SYMS
// RUN: llvm-readelf --needed-libs %t/libdense.so | FileCheck %s --check-prefix=NEEDED
// RUN: FileCheck %s --check-prefix=HDR < %t/libdense.h

// The entry points and the runtime they call are in the library.
// SYMS-DAG: T dense_train_step
// SYMS-DAG: T dense_forward
// SYMS-DAG: T kcc_rt_matmul_f32

// Linked against the kcc runtime only: no MLIR, no LLVM.
// NEEDED-NOT: libMLIR
// NEEDED-NOT: libLLVM
// NEEDED: libdnnl

// HDR: #define DENSE_LEARNING_RATE
// HDR: #define DENSE_TRAIN_STEP_NUM_ARGS 10
// HDR: void dense_train_step(
