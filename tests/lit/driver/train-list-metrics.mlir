// Metrics whose value is a list, as Keras logs a numpy array: the counts,
// Precision and Recall with several thresholds, F1Score/FBetaScore with
// average=None, R2Score with class_aggregation=None. Checked against Keras
// itself (scripts/keras-fixtures/make_stateful_metric_fixtures.py, vector/):
// 5 epochs on one batch from Keras's weights, validated, compiled and
// interpreted: every element of every --csv-log column within 1e-4 of
// Keras's history, the list cells written as Keras's CSVLogger writes them;
// kcc evaluate within 1e-5 of Keras's evaluate(return_dict=True).
// RUN: rm -rf %t && mkdir -p %t
// RUN: kcc train %kcc_src/tests/fixtures/keras/metrics/stateful/vector/thresholds.keras --data %kcc_src/tests/fixtures/keras/metrics/stateful/vector/thresholds_train.npz --validation-data %kcc_src/tests/fixtures/keras/metrics/stateful/vector/thresholds_val.npz --batch 16 --epochs 5 --shuffle=false --verbose 2 --csv-log %t/thresholds.csv | FileCheck %s --check-prefix=BAR
// RUN: python3 %S/Inputs/compare_vector_metrics.py %kcc_src/tests/fixtures/keras/metrics/stateful/vector/vector.json thresholds history %t/thresholds.csv 1e-4 | FileCheck %s --check-prefix=CMP-T
// RUN: FileCheck %s --check-prefix=CSV --input-file %t/thresholds.csv
// RUN: kcc train %kcc_src/tests/fixtures/keras/metrics/stateful/vector/thresholds.keras --data %kcc_src/tests/fixtures/keras/metrics/stateful/vector/thresholds_train.npz --validation-data %kcc_src/tests/fixtures/keras/metrics/stateful/vector/thresholds_val.npz --batch 16 --epochs 5 --shuffle=false --verbose 0 --mode interpreted --csv-log %t/thresholds-i.csv
// RUN: python3 %S/Inputs/compare_vector_metrics.py %kcc_src/tests/fixtures/keras/metrics/stateful/vector/vector.json thresholds history %t/thresholds-i.csv 1e-4 | FileCheck %s --check-prefix=CMP-T
// RUN: kcc evaluate %kcc_src/tests/fixtures/keras/metrics/stateful/vector/thresholds.keras --data %kcc_src/tests/fixtures/keras/metrics/stateful/vector/thresholds_val.npz --batch 12 --json > %t/thresholds-eval.json
// RUN: python3 %S/Inputs/compare_vector_metrics.py %kcc_src/tests/fixtures/keras/metrics/stateful/vector/vector.json thresholds evaluate %t/thresholds-eval.json 1e-5 | FileCheck %s --check-prefix=EVAL-T
// RUN: kcc evaluate %kcc_src/tests/fixtures/keras/metrics/stateful/vector/thresholds.keras --data %kcc_src/tests/fixtures/keras/metrics/stateful/vector/thresholds_val.npz --batch 12 | FileCheck %s --check-prefix=TEXT
//
// RUN: kcc train %kcc_src/tests/fixtures/keras/metrics/stateful/vector/classes.keras --data %kcc_src/tests/fixtures/keras/metrics/stateful/vector/classes_train.npz --validation-data %kcc_src/tests/fixtures/keras/metrics/stateful/vector/classes_val.npz --batch 16 --epochs 5 --shuffle=false --verbose 0 --csv-log %t/classes.csv
// RUN: python3 %S/Inputs/compare_vector_metrics.py %kcc_src/tests/fixtures/keras/metrics/stateful/vector/vector.json classes history %t/classes.csv 1e-4 | FileCheck %s --check-prefix=CMP-C
// RUN: kcc train %kcc_src/tests/fixtures/keras/metrics/stateful/vector/classes.keras --data %kcc_src/tests/fixtures/keras/metrics/stateful/vector/classes_train.npz --validation-data %kcc_src/tests/fixtures/keras/metrics/stateful/vector/classes_val.npz --batch 16 --epochs 5 --shuffle=false --verbose 0 --mode interpreted --csv-log %t/classes-i.csv
// RUN: python3 %S/Inputs/compare_vector_metrics.py %kcc_src/tests/fixtures/keras/metrics/stateful/vector/vector.json classes history %t/classes-i.csv 1e-4 | FileCheck %s --check-prefix=CMP-C
// RUN: kcc evaluate %kcc_src/tests/fixtures/keras/metrics/stateful/vector/classes.keras --data %kcc_src/tests/fixtures/keras/metrics/stateful/vector/classes_val.npz --batch 12 --json > %t/classes-eval.json
// RUN: python3 %S/Inputs/compare_vector_metrics.py %kcc_src/tests/fixtures/keras/metrics/stateful/vector/vector.json classes evaluate %t/classes-eval.json 1e-5 | FileCheck %s --check-prefix=EVAL-C
//
// RUN: kcc train %kcc_src/tests/fixtures/keras/metrics/stateful/vector/columns.keras --data %kcc_src/tests/fixtures/keras/metrics/stateful/vector/columns_train.npz --validation-data %kcc_src/tests/fixtures/keras/metrics/stateful/vector/columns_val.npz --batch 16 --epochs 5 --shuffle=false --verbose 0 --csv-log %t/columns.csv
// RUN: python3 %S/Inputs/compare_vector_metrics.py %kcc_src/tests/fixtures/keras/metrics/stateful/vector/vector.json columns history %t/columns.csv 1e-4 | FileCheck %s --check-prefix=CMP-R
// RUN: kcc train %kcc_src/tests/fixtures/keras/metrics/stateful/vector/columns.keras --data %kcc_src/tests/fixtures/keras/metrics/stateful/vector/columns_train.npz --validation-data %kcc_src/tests/fixtures/keras/metrics/stateful/vector/columns_val.npz --batch 16 --epochs 5 --shuffle=false --verbose 0 --mode interpreted --csv-log %t/columns-i.csv
// RUN: python3 %S/Inputs/compare_vector_metrics.py %kcc_src/tests/fixtures/keras/metrics/stateful/vector/vector.json columns history %t/columns-i.csv 1e-4 | FileCheck %s --check-prefix=CMP-R
// RUN: kcc evaluate %kcc_src/tests/fixtures/keras/metrics/stateful/vector/columns.keras --data %kcc_src/tests/fixtures/keras/metrics/stateful/vector/columns_val.npz --batch 12 --json > %t/columns-eval.json
// RUN: python3 %S/Inputs/compare_vector_metrics.py %kcc_src/tests/fixtures/keras/metrics/stateful/vector/vector.json columns evaluate %t/columns-eval.json 1e-5 | FileCheck %s --check-prefix=EVAL-R
//
// Saved and read back, the metrics keep their lists of thresholds and
// average=None, and train the same.
// RUN: kcc train %kcc_src/tests/fixtures/keras/metrics/stateful/vector/classes.keras --data %kcc_src/tests/fixtures/keras/metrics/stateful/vector/classes_train.npz --batch 16 --epochs 1 --verbose 0 --save %t/classes-saved.keras
// RUN: kcc train %t/classes-saved.keras --data %kcc_src/tests/fixtures/keras/metrics/stateful/vector/classes_train.npz --batch 16 --epochs 1 --verbose 0 --csv-log %t/saved.csv
// RUN: FileCheck %s --check-prefix=SAVED --input-file %t/saved.csv
//
// A list has no best value to monitor: Keras fails comparing its array;
// kcc names the callback, the monitor and the epoch.
// RUN: not kcc train %kcc_src/tests/fixtures/keras/metrics/stateful/vector/thresholds.keras --data %kcc_src/tests/fixtures/keras/metrics/stateful/vector/thresholds_train.npz --validation-data %kcc_src/tests/fixtures/keras/metrics/stateful/vector/thresholds_val.npz --batch 16 --epochs 2 --verbose 0 --early-stopping=monitor=val_precision 2>&1 | FileCheck %s --check-prefix=STOP
// RUN: not kcc train %kcc_src/tests/fixtures/keras/metrics/stateful/vector/thresholds.keras --data %kcc_src/tests/fixtures/keras/metrics/stateful/vector/thresholds_train.npz --batch 16 --epochs 2 --verbose 0 --reduce-lr-on-plateau=monitor=recall 2>&1 | FileCheck %s --check-prefix=PLATEAU

// The bar shows a list's mean, as Keras's Progbar averages an array.
// BAR: Epoch 1/5
// BAR: 1/1 - {{.*}} - loss: {{[0-9.]+}} - accuracy: {{[0-9.]+}} - fn: {{[0-9.]+}} - precision: {{[0-9.]+}} - precision_one: {{[0-9.]+}} - recall: {{[0-9.]+}} - true_positives: {{[0-9.]+}} - val_loss:

// CMP-T: thresholds history: 14 keys, 40 list values, max difference
// EVAL-T: thresholds evaluate: 7 keys, 4 list values, max difference
// CMP-C: classes history: 10 keys, 30 list values, max difference
// EVAL-C: classes evaluate: 5 keys, 3 list values, max difference
// CMP-R: columns history: 6 keys, 10 list values, max difference
// EVAL-R: columns evaluate: 3 keys, 1 list values, max difference

// CSV: epoch,accuracy,fn,loss,precision,precision_one,recall,true_positives,val_accuracy,val_fn,val_loss,val_precision,val_precision_one,val_recall,val_true_positives
// CSV-NEXT: {{^}}0,{{[0-9.e-]+}},"""[{{[0-9.e-]+}}, {{[0-9.e-]+}}]""",{{[0-9.e-]+}},"""[{{[0-9.e-]+}}, {{[0-9.e-]+}}, {{[0-9.e-]+}}]""",{{[0-9.e-]+}},"""[

// TEXT: 12 examples of
// TEXT-NEXT: loss: {{[0-9.]+}} - accuracy: {{[0-9.]+}} - fn: [{{[0-9.]+}}, {{[0-9.]+}}] - precision: [{{[0-9.]+}}, {{[0-9.]+}}, {{[0-9.]+}}] - precision_one: {{[0-9.]+}} - recall: [

// SAVED: epoch,accuracy,f1_at_0_3,f1_score,fbeta_score,loss
// SAVED-NEXT: 0,{{[0-9.e-]+}},"""[{{[0-9.e-]+}}, {{[0-9.e-]+}}, {{[0-9.e-]+}}, {{[0-9.e-]+}}]""","""[

// STOP: kcc: error: EarlyStopping: monitor 'val_precision' is a list of 3 values at the end of epoch 1 (a metric with several thresholds or classes), which has no single best; monitor a metric with one value
// PLATEAU: error: ReduceLROnPlateau: monitor 'recall' is a list of 3 values at the end of epoch 1
