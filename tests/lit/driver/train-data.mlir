// kcc train on users' data: .npz archives and folders of memory-mapped .npy
// files (written by Inputs/make_npz.py), validation, callbacks and every
// bad-data diagnostic (file, array, expected and found). Nothing is written
// when training could not start.
// RUN: rm -rf %t && python3 %S/Inputs/make_npz.py %t %kcc_src/examples/mlp.json
//
// 64 examples at batch 48: the partial last batch is trained (2 steps), and
// float64/int64 arrays or Keras's dict names train the same.
// RUN: kcc train %kcc_src/examples/mlp.json --data %t/good.npz --batch 48 --epochs 1 --shuffle=false 2>&1 | FileCheck %s --check-prefix=GOOD
// RUN: kcc train %kcc_src/examples/mlp.json --data %t/f64.npz --batch 48 --epochs 1 --shuffle=false 2>&1 | FileCheck %s --check-prefix=GOOD
// RUN: kcc train %kcc_src/examples/mlp.json --data %t/named.npz --batch 48 --epochs 1 --shuffle=false 2>&1 | FileCheck %s --check-prefix=GOOD
// RUN: kcc train %kcc_src/examples/mlp.json --data %t/dir --batch 48 --epochs 1 --shuffle=false 2>&1 | FileCheck %s --check-prefix=MAPPED
//
// Validation: a file, or the last quarter; --verbose 2 prints one line.
// RUN: kcc train %kcc_src/examples/mlp.json --data %t/good.npz --validation-data %t/good.npz --batch 16 --epochs 1 2>&1 | FileCheck %s --check-prefix=VAL
// RUN: kcc train %kcc_src/examples/mlp.json --data %t/good.npz --validation-split 0.25 --batch 16 --epochs 2 --verbose 2 2>/dev/null | FileCheck %s --check-prefix=SPLIT
// RUN: kcc train %kcc_src/examples/mlp.json --data %t/good.npz --batch 16 --epochs 1 --verbose 0 2>&1 | count 0
//
// An autoencoder with loss mse and no metrics: no accuracy is forced on it.
// CSVLogger, ReduceLROnPlateau and EarlyStopping (which stops it: a patience
// of 0 on a value that cannot improve, min_delta 1).
// RUN: kcc train %t/ae.json --data %t/ae.npz --batch 16 --epochs 5 --csv-log %t/log.csv --reduce-lr-on-plateau=monitor=loss,patience=1,factor=0.5 --early-stopping=monitor=loss,patience=0,min_delta=1,verbose=1 2>&1 | FileCheck %s --check-prefix=AE
// RUN: FileCheck %s --check-prefix=CSV < %t/log.csv
//
// Bad data, each before anything is written (no CSV log appears).
// RUN: not kcc train %kcc_src/examples/mlp.json --data %t/missing.npz --csv-log %t/bad.csv 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not ls %t/bad.csv
// RUN: not kcc train %kcc_src/examples/mlp.json --data %t/rank.npz 2>&1 | FileCheck %s --check-prefix=RANK
// RUN: not kcc train %kcc_src/examples/mlp.json --data %t/length.npz 2>&1 | FileCheck %s --check-prefix=LENGTH
// RUN: not kcc train %kcc_src/examples/mlp.json --data %t/label.npz 2>&1 | FileCheck %s --check-prefix=LABEL
// RUN: not kcc train %kcc_src/examples/mlp.json --data %t/notzip.npz 2>&1 | FileCheck %s --check-prefix=NOTZIP
// RUN: not kcc train %kcc_src/examples/mlp.json --data %t/truncated.npz 2>&1 | FileCheck %s --check-prefix=TRUNC
// RUN: not kcc train %kcc_src/examples/mlp.json --data %t/good.npz --validation-data %t/rank.npz 2>&1 | FileCheck %s --check-prefix=VALRANK
// RUN: not kcc train %kcc_src/examples/mlp.json --data %t/nan.npz --batch 16 --shuffle=false 2>&1 | FileCheck %s --check-prefix=NAN
// RUN: not kcc train %kcc_src/examples/mlp.json --data %t/good.npz --early-stopping=patince=3 2>&1 | FileCheck %s --check-prefix=FLAG
// RUN: not kcc train %kcc_src/examples/mlp.json --data %t/good.npz --reduce-lr-on-plateau=factor=2 2>&1 | FileCheck %s --check-prefix=FACTOR
// RUN: not kcc train %kcc_src/examples/mlp.json --verbose 3 2>&1 | FileCheck %s --check-prefix=VERBOSE
// RUN: not kcc train %kcc_src/examples/mlp.json --validation-split 1 2>&1 | FileCheck %s --check-prefix=SPLITFLAG

// GOOD: on 64 examples
// GOOD: Epoch 1/1
// GOOD-NEXT: 2/2 [==============================] - {{[0-9]+}}s {{[0-9]+(s|ms|us)}}/step - loss: [[LOSS:[0-9.]+]] - accuracy: [[ACC:[0-9.]+]]
// GOOD-NOT: test accuracy
// MAPPED: on 64 examples (memory-mapped)
// MAPPED: 2/2 [==============================] - {{.*}} - loss: {{[0-9.]+}}

// VAL: on 64 examples, validating on 64
// VAL: 4/4 [==============================] - {{.*}} - loss: {{[0-9.]+}} - accuracy: {{[0-9.]+}} - val_loss: {{[0-9.]+}} - val_accuracy: [[VACC:[0-9.]+]]
// VAL: val accuracy: [[VACC]] (64 examples)

// SPLIT: on 48 examples, validating on 16
// SPLIT: Epoch 1/2
// SPLIT: 3/3 - {{[0-9]+}}s - {{[0-9]+(s|ms|us)}}/step - loss: {{[0-9.]+}} - accuracy: {{[0-9.]+}} - val_loss: {{[0-9.]+}} - val_accuracy: {{[0-9.]+}}
// SPLIT-NEXT: Epoch 2/2
// SPLIT-NEXT: 3/3 - {{[0-9]+}}s


// AE: training ae (compiled, batch 16, adam, mean_squared_error) on 64 examples
// AE: 4/4 [==============================] - {{.*}} - loss: {{[0-9.]+}}{{$}}
// AE: Epoch 2/5
// AE: Epoch 2: early stopping
// AE-NOT: Epoch 3/5
// AE-NOT: accuracy
// CSV: epoch,learning_rate,loss
// CSV-NEXT: 0,0.0010000000474974513,{{[0-9.]+}}
// CSV-NEXT: 1,0.0010000000474974513,{{[0-9.]+}}
// CSV-EMPTY:

// MISSING: kcc: error: {{.*}}missing.npz: no target array 'y' (or 'dense_2'); the archive holds: x
// RANK: kcc: error: {{.*}}rank.npz: array 'x': expected inputs of shape [N, 28, 28, 1], found [64, 784] (float32)
// LENGTH: kcc: error: {{.*}}length.npz: x has 64 examples ({{.*}}array 'x') but y has 63 ({{.*}}array 'y'): they must have as many
// LABEL: kcc: error: {{.*}}label.npz: array 'y': label 10 of example 5 is not a class: sparse_categorical_crossentropy takes integers in [0, 10)
// NOTZIP: kcc: error: {{.*}}notzip.npz: not a .npz archive (zip): Not a zip archive
// TRUNC: kcc: error: {{.*}}truncated.npz: not a .npz archive (zip)
// VALRANK: kcc: error: {{.*}}rank.npz: array 'x': expected inputs of shape [N, 28, 28, 1], found [64, 784]
// NAN: kcc: warning: {{.*}}nan.npz: array 'x': 3 NaN values in the inputs; the loss will be NaN
// NAN: kcc: error: step 1 (epoch 1, batch 1/4, compiled): loss is nan; terminating training (--terminate-on-nan)
// NAN-NEXT: kcc: note: first non-finite value: layer 'flatten'
// FLAG: kcc: error: --early-stopping: unknown key 'patince' (expected baseline, min_delta, mode, monitor, patience, restore_best_weights, start_from_epoch, verbose)
// FACTOR: kcc: error: --reduce-lr-on-plateau: factor must be below 1.0, got 2.0
// VERBOSE: kcc: error: --verbose must be 0, 1 or 2, got 3
// SPLITFLAG: kcc: error: --validation-split must be in [0, 1), got 1
