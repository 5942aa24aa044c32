// --dump-dir and --fusion-report on kcc train: the stages and the fusion
// report of the step it trains (its batch, optimizer and loss, from the
// spec and the flags), then the training.
// RUN: rm -rf %t && mkdir -p %t
// RUN: python3 %S/Inputs/npy.py write %t/d.npz x=f4:16,28,28,1 y=i8:16:labels:10
// RUN: kcc train %kcc_src/examples/mlp.json --data %t/d.npz --batch 8 --optimizer=sgd --dump-dir=%t/dump --fusion-report | FileCheck %s --check-prefix=REPORT
// RUN: ls %t/dump | FileCheck %s --check-prefix=FILES
// RUN: FileCheck %s --check-prefix=TRAIN < %t/dump/02-train.mlir
// RUN: FileCheck %s --check-prefix=LL < %t/dump/06-llvm.ll

// REPORT: train_step
// REPORT: kcc: training mlp (compiled, batch 8, sgd
// REPORT: Epoch 1/1

// FILES: 01-kc.mlir
// FILES-NEXT: 02-train.mlir
// FILES-NEXT: 03-linalg.mlir
// FILES-NEXT: 04-fused.mlir
// FILES-NEXT: 05-llvm.mlir
// FILES-NEXT: 06-llvm.ll

// TRAIN: func.func @train_step({{.*}}tensor<8x28x28x1xf32>
// TRAIN-NOT: kc.adam
// LL: define void @train_step(
