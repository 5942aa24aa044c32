// The ctc loss from a .keras Keras compiled with it (written by Keras
// itself: scripts/keras-fixtures/make_ctc_fixtures.py): `kcc train` on
// Keras's .npz (label sequences [16, 4] for 10 steps, padded when read)
// logs Keras's 5 losses within 1e-4, compiled and interpreted; the saved
// model keeps the loss in its compile config (the Loss object Keras wrote),
// and `kcc evaluate` on it gives Keras's evaluate() within 1e-5. Bad labels
// are named with the file, the example and the position, before any step.
// RUN: rm -rf %t && mkdir -p %t
// RUN: kcc train %kcc_src/tests/fixtures/keras/ctc/ctc.keras --data %kcc_src/tests/fixtures/keras/ctc/data.npz --batch 16 --epochs 5 --shuffle=false --verbose 0 --csv-log %t/c.csv --save %t/c.keras
// RUN: kcc evaluate %t/c.keras --data %kcc_src/tests/fixtures/keras/ctc/data.npz --batch 6 > %t/c.txt
// RUN: python3 %S/Inputs/compare_ctc.py %kcc_src/tests/fixtures/keras/ctc/fit.json ctc %t/c.csv %t/c.txt | FileCheck %s --check-prefix=CMP
// RUN: kcc train %kcc_src/tests/fixtures/keras/ctc/ctc_sum_weighted.keras --data %kcc_src/tests/fixtures/keras/ctc/weighted.npz --batch 16 --epochs 5 --shuffle=false --verbose 0 --mode=interpreted --csv-log %t/w.csv --save %t/w.keras
// RUN: kcc evaluate %t/w.keras --data %kcc_src/tests/fixtures/keras/ctc/weighted.npz --batch 6 --mode=interpreted > %t/w.txt
// RUN: python3 %S/Inputs/compare_ctc.py %kcc_src/tests/fixtures/keras/ctc/fit.json ctc_sum_weighted %t/w.csv %t/w.txt | FileCheck %s --check-prefix=CMP-W
// RUN: python3 -c "import json, zipfile; print(json.loads(zipfile.ZipFile('%t/w.keras').read('config.json'))['compile_config']['loss'])" | FileCheck %s --check-prefix=SAVED
// Bad labels: a class past the classes, a negative one, a fraction, wider
// than the steps, not [N, W].
// RUN: python3 %S/Inputs/npy.py write %t/big.npz x=f4:16,10,4 y=i4:16,4:labels:7
// RUN: python3 %S/Inputs/npy.py write %t/neg.npz x=f4:16,10,4 y=i4:16,4:const:-1
// RUN: python3 %S/Inputs/npy.py write %t/frac.npz x=f4:16,10,4 y=f4:16,4:const:1.5
// RUN: python3 %S/Inputs/npy.py write %t/long.npz x=f4:16,10,4 y=i4:16,11:labels:5
// RUN: python3 %S/Inputs/npy.py write %t/rank.npz x=f4:16,10,4 y=i4:16,2,2:labels:5
// RUN: not kcc train %kcc_src/tests/fixtures/keras/ctc/ctc.keras --data %t/big.npz --batch 16 2>&1 | FileCheck %s --check-prefix=BIG
// RUN: not kcc train %kcc_src/tests/fixtures/keras/ctc/ctc.keras --data %t/neg.npz --batch 16 2>&1 | FileCheck %s --check-prefix=NEG
// RUN: not kcc evaluate %kcc_src/tests/fixtures/keras/ctc/ctc.keras --data %t/frac.npz --batch 16 2>&1 | FileCheck %s --check-prefix=FRAC
// RUN: not kcc train %kcc_src/tests/fixtures/keras/ctc/ctc.keras --data %t/long.npz --batch 16 2>&1 | FileCheck %s --check-prefix=LONG
// RUN: not kcc train %kcc_src/tests/fixtures/keras/ctc/ctc.keras --data %t/rank.npz --batch 16 2>&1 | FileCheck %s --check-prefix=RANK
// Sequences no alignment fits (ten 2s need 19 steps, there are 10): legal,
// as in Keras, with its large finite loss (log_epsilon -1e5), and a warning.
// RUN: python3 %S/Inputs/npy.py write %t/rep.npz x=f4:16,10,4 y=i4:16,10:const:2
// RUN: kcc train %kcc_src/tests/fixtures/keras/ctc/ctc.keras --data %t/rep.npz --batch 16 --epochs 1 --verbose 0 --csv-log %t/rep.csv 2>&1 | FileCheck %s --check-prefix=WARN
// RUN: FileCheck %s --check-prefix=INFEASIBLE < %t/rep.csv
// Logits must be [batch, steps, classes].
// RUN: not kcc --emit=train --loss=ctc %S/Inputs/dense.mlir 2>&1 | FileCheck %s --check-prefix=LOGITS
// The step calls the kernel: kc.ctc_loss, its gradient, then the library calls.
// RUN: kcc --emit=train %kcc_src/tests/fixtures/keras/ctc/ctc.keras --batch 16 | FileCheck %s --check-prefix=IR
// RUN: kcc --emit=llvm-mlir %kcc_src/tests/fixtures/keras/ctc/ctc.keras --batch 16 | FileCheck %s --check-prefix=CALLS

// CMP: ctc: 5 epochs, max loss rel difference
// CMP-W: ctc_sum_weighted: 5 epochs, max loss rel difference
// SAVED: {'module': 'keras.losses', 'class_name': 'CTC', 'config': {'name': 'ctc', 'reduction': 'sum'}, 'registered_name': None}

// BIG: kcc: error: {{.*}}big.npz: array 'y': label 5 of example 1 (position 1) is not a class: ctc takes integers in [0, 5), 0 the blank
// NEG: kcc: error: {{.*}}neg.npz: array 'y': label -1 of example 0 (position 0) is not a class
// FRAC: kcc: error: {{.*}}frac.npz: array 'y': label 1.5 of example 0 (position 0) is not a class
// LONG: kcc: error: {{.*}}long.npz: array 'y': label sequences of 11 columns are longer than the 10 time steps of the prediction
// RANK: kcc: error: {{.*}}rank.npz: array 'y': ctc takes label sequences of shape [N, max_label_length] (integers, 0 the blank and the padding), found [16, 2, 2] (int32)
// WARN: kcc: warning: {{.*}}rep.npz: array 'y': 16 label sequences cannot align with the 10 steps (example 0 needs 19): their ctc loss is about 1e5 each, as in Keras
// INFEASIBLE: 0,1000{{[0-9][0-9]}}.{{[0-9]+$}}
// LOGITS: dense.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'func.func' op result 0 'tensor<4x2xf32>' cannot take the ctc loss (ctc takes logits [batch, steps, classes], a prediction of rank 3 (got rank 2))

// IR-LABEL: func.func @train_step(
// IR: kc.ctc_loss {{.*}} : tensor<16x10x5xf32>, tensor<16x10xi32> -> tensor<16xf32>
// IR: kc.ctc_loss_grad

// CALLS: llvm.call @kcc_rt_ctc_loss_f32(
// CALLS: llvm.call @kcc_rt_ctc_loss_grad_f32(
