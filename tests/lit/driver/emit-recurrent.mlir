// An LSTM classifier written by Keras (Embedding, LSTM(12), Dense): the
// input projection of every time step is hoisted out of the recurrence as
// one GEMM over T*B rows, forward ([1280, 8] x [8, 48]) and backward (the
// input kernel's gradient and the inputs' gradient, one GEMM each), so the
// loop over time carries only the recurrent product. The table's gradient
// is a scatter-add: no [30, 8] product of a one-hot matrix.
// The same model with int64 ids gathers with int64 indices down to the C
// header. With Embedding(mask_zero=True) the LSTM runs one kc.recurrence
// per step, each from the state the mask selected (kc.select).
// RUN: rm -rf %t && mkdir -p %t
// RUN: kcc --emit=kc %kcc_src/tests/fixtures/keras/recurrent/rnn_lstm.keras | FileCheck %s --check-prefix=KC
// RUN: kcc --emit=train %kcc_src/tests/fixtures/keras/recurrent/rnn_lstm.keras | FileCheck %s --check-prefix=TRAIN
// RUN: python3 -c "import sys, zipfile; sys.stdout.write(zipfile.ZipFile(sys.argv[1]).read('config.json').decode())" %kcc_src/tests/fixtures/keras/recurrent/rnn_lstm.keras > %t/lstm.json
// RUN: sed -e 's/"int32"/"int64"/g' %t/lstm.json > %t/lstm64.json
// RUN: kcc --emit=lib %t/lstm64.json -o %t/liblstm64.so
// RUN: llvm-nm -D --defined-only %t/liblstm64.so | FileCheck %s --check-prefix=SYMS64
// RUN: FileCheck %s --check-prefix=HDR64 < %t/liblstm64.h
// RUN: python3 %S/Inputs/npy.py write %t/ids64.npz x=i8:20,40:labels:30 y=f4:20,1
// RUN: kcc train %t/lstm64.json --data %t/ids64.npz --loss binary_crossentropy --batch 10 --epochs 1 --verbose 2 --mode=both | FileCheck %s --check-prefix=TRAIN64
// RUN: sed -e 's/"mask_zero": false/"mask_zero": true/' %t/lstm.json > %t/masked.json
// RUN: kcc --emit=kc %t/masked.json | FileCheck %s --check-prefix=MASK

// KC-LABEL: func.func @forward
// KC: kc.gather {{.*}} -> tensor<32x40x8xf32>
// KC: kc.matmul {{.*}} : tensor<1280x8xf32>, tensor<8x48xf32> -> tensor<1280x48xf32>
// KC: kc.recurrence {{.*}} {cell = "lstm"} : tensor<40x32x48xf32>, tensor<12x48xf32>
// KC-NOT: kc.recurrence
// KC: return

// TRAIN-LABEL: func.func @train_step
// TRAIN: kc.recurrence_grad
// TRAIN-NOT: kc.recurrence_grad
// TRAIN-DAG: kc.matmul {{.*}} : tensor<1280x48xf32>, tensor<8x48xf32> -> tensor<1280x8xf32>
// TRAIN-DAG: kc.matmul {{.*}} {transpose_lhs = true} : tensor<1280x8xf32>, tensor<1280x48xf32> -> tensor<8x48xf32>
// TRAIN-NOT: tensor<32x40x30xf32>
// TRAIN: kc.gather_grad {{.*}} -> tensor<30x8xf32>

// SYMS64-DAG: T kcc_rt_gather_i64_f32
// SYMS64-DAG: T kcc_rt_gather_grad_i64_f32
// HDR64: const int64_t *{{.*}} /* input_0: i64[32x40] */

// TRAIN64: compiled:    loss [[LOSS:[0-9.]+]]
// TRAIN64: interpreted: loss [[LOSS]]

// MASK-LABEL: func.func @forward
// MASK: kc.compare
// MASK: kc.recurrence {{.*}} {cell = "lstm"} : tensor<1x32x48xf32>, tensor<12x48xf32>, tensor<32x24xf32>
// MASK: kc.select
// MASK: kc.recurrence {{.*}} {cell = "lstm"} : tensor<1x32x48xf32>
