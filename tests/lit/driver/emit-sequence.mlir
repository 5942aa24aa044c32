// An Embedding + Conv1D classifier written by Keras (int32 ids): the
// forward gathers, the train step scatter-adds the table's gradient, and
// the library's header takes the ids as int32_t.
// RUN: rm -rf %t && mkdir -p %t
// RUN: kcc --emit=kc %kcc_src/tests/fixtures/keras/sequence/seq_conv.keras | FileCheck %s --check-prefix=KC
// RUN: kcc --emit=train %kcc_src/tests/fixtures/keras/sequence/seq_conv.keras | FileCheck %s --check-prefix=TRAIN
// RUN: kcc --emit=lib %kcc_src/tests/fixtures/keras/sequence/seq_conv.keras -o %t/libseq.so
// RUN: llvm-nm -D --defined-only %t/libseq.so | FileCheck %s --check-prefix=SYMS
// RUN: FileCheck %s --check-prefix=HDR < %t/libseq.h

// KC-LABEL: func.func @forward
// KC: kc.gather %{{.*}}, %{{.*}} : tensor<50x8xf32>, tensor<32x80xi32> -> tensor<32x80x8xf32>
// KC: kc.conv2d

// TRAIN-LABEL: func.func @train_step
// TRAIN: kc.gather_grad %{{.*}}, %{{.*}} : tensor<32x80xi32>, tensor<32x80x8xf32> -> tensor<50x8xf32>

// SYMS-DAG: T kcc_rt_gather_i32_f32
// SYMS-DAG: T kcc_rt_gather_grad_i32_f32

// HDR: {"input_0", KCC_I32, 2, {32, 80}
// HDR: const int32_t *{{.*}} /* input_0: i32[32x80] */
