// The metrics of --metrics (or the compile config) are computed in the step
// and logged under the names given, as Keras logs them; kcc evaluate
// computes the same ones from the predictions. An unknown metric is an error
// listing the supported ones; auc needs targets of the prediction's shape.
// A metric with arguments is Keras's class and its arguments, commas and
// all, logged under its instance name (or the class's default name); a bare
// name logs as written, a class name too, as Keras logs compile()'s strings.
// RUN: rm -rf %t && mkdir -p %t
// RUN: python3 %S/Inputs/npy.py write %t/d.npz x=f4:16,28,28,1 y=i8:16:labels:10
// RUN: python3 %S/Inputs/npy.py write %t/mse.npz x=f4:16,28,28,1 y=f4:16,10
// RUN: kcc train %kcc_src/examples/mlp.json --data %t/d.npz --batch 8 --epochs 1 --verbose 2 --metrics accuracy,sparse_top_k_categorical_accuracy 2>&1 | FileCheck %s --check-prefix=SPARSE
// RUN: kcc train %kcc_src/examples/mlp.json --data %t/mse.npz --batch 8 --epochs 1 --verbose 2 --loss mse --metrics mae,mean_squared_error,top_k_categorical_accuracy 2>&1 | FileCheck %s --check-prefix=DENSE
// RUN: kcc evaluate %kcc_src/examples/mlp.json --data %t/mse.npz --loss mse --metrics mae,mse,top_k_categorical_accuracy | FileCheck %s --check-prefix=EVAL
// RUN: kcc train %kcc_src/examples/mlp.json --data %t/mse.npz --batch 8 --epochs 1 --verbose 2 --loss mse --metrics 'AUC(num_thresholds=50,curve=PR,name=pr_auc),Precision(top_k=2),RootMeanSquaredError,F1Score(average=macro,threshold=0.5)' 2>&1 | FileCheck %s --check-prefix=STATEFUL
// RUN: kcc evaluate %kcc_src/examples/mlp.json --data %t/mse.npz --loss mse --metrics 'AUC(num_thresholds=50,curve=PR,name=pr_auc),Precision(top_k=2),RootMeanSquaredError' | FileCheck %s --check-prefix=STATEFUL-EVAL
// RUN: not kcc train %kcc_src/examples/mlp.json --data %t/d.npz --metrics auc 2>&1 | FileCheck %s --check-prefix=AUC
// RUN: not kcc train %kcc_src/examples/mlp.json --data %t/d.npz --metrics mae 2>&1 | FileCheck %s --check-prefix=MAE
// RUN: not kcc train %kcc_src/examples/mlp.json --data %t/d.npz --metrics f1 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// SPARSE: 2/2 - {{.*}} - loss: {{[0-9.]+}} - accuracy: 0.{{[0-9]+}} - sparse_top_k_categorical_accuracy: {{[01]}}.{{[0-9]+}}{{$}}
// DENSE: 2/2 - {{.*}} - loss: {{[0-9.]+}} - mae: 0.{{[0-9]+}} - mean_squared_error: 0.{{[0-9]+}} - top_k_categorical_accuracy: {{[01]}}.{{[0-9]+}}{{$}}
// EVAL: loss: [[L:[0-9.]+]] - mae: 0.{{[0-9]+}} - mse: [[L]] - top_k_categorical_accuracy: {{[01]}}.{{[0-9]+}}
// STATEFUL: 2/2 - {{.*}} - loss: {{[0-9.]+}} - RootMeanSquaredError: {{[0-9.]+}} - f1_score: {{[0-9.]+}} - pr_auc: {{[0-9.]+}} - precision: {{[0-9.]+}}{{$}}
// STATEFUL-EVAL: loss: {{[0-9.]+}} - RootMeanSquaredError: {{[0-9.]+}} - pr_auc: {{[0-9.]+}} - precision: {{[0-9.]+}}
// AUC: kcc: error: compile: metric 'auc' needs targets of the prediction's shape, which loss sparse_categorical_crossentropy does not take
// MAE: kcc: error: compile: metric 'mae' needs targets of the prediction's shape, which loss sparse_categorical_crossentropy does not take
// UNKNOWN: kcc: error: compile: unknown metric 'f1' for loss
