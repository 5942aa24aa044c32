// Recurrence is a loop in the IR: the training step of an LSTM, lowered to
// the LLVM dialect, is as large (within 5% of its lines) for 1000 steps as
// for 10. An f32 LSTM's forward and backward are generated loop nests over
// vectors of the units (codegen/lowering/RecurrenceCells.cpp), with no call
// per step, in internal functions: the forward of @forward and of
// @train_step is one.
// The f64 step keeps its loop over the step entry points.
// RUN: kcc-opt %s --kc-build-train-step="loss=mse optimizer=adam" --kc-cpu-pipeline -o %t.10
// RUN: sed -e 's/<10x/<1000x/g' -e 's/9, 0, 0/999, 0, 0/' -e 's/10, 2, 3/1000, 2, 3/' %s | kcc-opt --kc-build-train-step="loss=mse optimizer=adam" --kc-cpu-pipeline -o %t.1000
// RUN: python3 %S/Inputs/same-size.py %t.10 %t.1000
// RUN: FileCheck %s < %t.1000
// RUN: sed -e 's/f32/f64/g' %s | kcc-opt --kc-build-train-step="loss=mse optimizer=adam" --kc-cpu-pipeline | FileCheck %s --check-prefix=F64

// CHECK-NOT: kcc_rt_recurrence
// CHECK-LABEL: llvm.func @forward(
// CHECK: llvm.call @[[FWD:kc_recurrence_lstm_1000x2x3_a0r1]](
// CHECK-LABEL: llvm.func @train_step(
// CHECK: llvm.call @[[FWD]](
// CHECK: llvm.call @[[BWD:kc_recurrence_grad_lstm_1000x2x3_a0r1_g999_1000_0_3]](
// CHECK: llvm.func internal @[[FWD]](
// CHECK: llvm.intr.fmuladd({{.*}}) : (vector<4xf32>, vector<4xf32>, vector<4xf32>) -> vector<4xf32>
// CHECK: llvm.func internal @[[BWD]](
// CHECK-NOT: kcc_rt_recurrence

// F64-LABEL: llvm.func @train_step(
// F64: llvm.call @kcc_rt_recurrence_step_f64(
// F64: llvm.call @kcc_rt_recurrence_grad_step_f64(

func.func @forward(%x: tensor<10x2x12xf32> {kc.input = 0 : i64},
                   %u: tensor<3x12xf32> {kc.name = "lstm/cell/recurrent_kernel", kc.trainable = true},
                   %rb: tensor<12xf32> {kc.name = "lstm/cell/bias", kc.trainable = true}) -> tensor<2x3xf32> {
  %h0 = kc.constant dense<0.0> : tensor<2x6xf32>
  %s = kc.recurrence %x, %u, %h0, %rb {cell = "lstm"} : tensor<10x2x12xf32>, tensor<3x12xf32>, tensor<2x6xf32>, tensor<12xf32> -> tensor<10x2x18xf32>
  %last = kc.slice %s {start = array<i64: 9, 0, 0>, limit = array<i64: 10, 2, 3>, strides = array<i64: 1, 1, 1>} : tensor<10x2x18xf32> -> tensor<1x2x3xf32>
  %h = kc.reshape %last : tensor<1x2x3xf32> -> tensor<2x3xf32>
  return %h : tensor<2x3xf32>
}
