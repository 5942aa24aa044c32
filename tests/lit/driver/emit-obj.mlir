// RUN: rm -rf %t && mkdir -p %t
// RUN: kcc --emit=obj --metrics=accuracy %S/Inputs/dense.mlir -o %t/step.o
// RUN: llvm-nm %t/step.o | FileCheck %s --check-prefix=SYMS
// RUN: FileCheck %s --check-prefix=HDR < %t/step.h
// The header is valid C and C++.
// RUN: cc -std=c99 -Wall -Werror -fsyntax-only -x c %t/step.h
// RUN: c++ -Wall -Werror -fsyntax-only -x c++ %t/step.h
// No temporaries are left next to the outputs.
// RUN: ls %t | count 2

// SYMS-DAG: T forward
// SYMS-DAG: T train_step
// SYMS-DAG: U kcc_rt_matmul_f32

// HDR: #ifndef STEP_H
// HDR: #define KCC_LEARNING_RATE
// HDR: #define TRAIN_STEP_NUM_ARGS 10
// HDR: #define TRAIN_STEP_NUM_RESULTS 9
// HDR: #define TRAIN_STEP_ARG_ITERATIONS 6
// HDR: #define TRAIN_STEP_ARG_TARGET 9
// HDR: #define TRAIN_STEP_RESULT_FIRST_PARAM 2
// HDR: static const kcc_tensor_desc train_step_args[10] = {
// HDR-NEXT: {"dense/kernel", KCC_F32, 2, {3, 2}, 6, 24},
// HDR: {"target", KCC_I32, 1, {4}, 4, 16},
// The JIT's code: an arena argument, params, slots and counter in place.
// HDR: #define TRAIN_STEP_ARENA_BYTES {{[1-9][0-9]*}}
// HDR: #define TRAIN_STEP_NUM_IN_PLACE 7
// HDR-NEXT: static const int32_t train_step_in_place[7][2] = {{[{][{]}}2, 0}, {3, 1},
// HDR: void train_step(
// HDR-NEXT: const float *arg0, /* dense/kernel: f32[3x2] */
// HDR: int64_t *res8, /* iterations: i64[] */
// HDR-NEXT: void *arena /* TRAIN_STEP_ARENA_BYTES */);
// HDR: static inline void train_step_packed(void *const *args, void *const *results, void *arena)
