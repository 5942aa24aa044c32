// kcc evaluate: the compile config's loss and metrics over every example,
// as Keras's evaluate() computes them (the Trainer's evaluate, which
// FitParityTest and MetricParityTest compare with Keras's numbers); flags
// override the config; bad targets are named with the file, the array and
// the shapes, as kcc train names them.
// RUN: rm -rf %t && mkdir -p %t
// RUN: python3 %S/Inputs/npy.py write %t/d.npz x=f4:10,28,28,1 y=i8:10:labels:10
// RUN: python3 %S/Inputs/npy.py write %t/noy.npz x=f4:10,28,28,1
// RUN: python3 %S/Inputs/npy.py write %t/short.npz x=f4:10,28,28,1 y=i8:9:labels:10
// RUN: python3 %S/Inputs/npy.py write %t/range.npz x=f4:12,28,28,1 y=i8:12:labels:12
// RUN: python3 %S/Inputs/npy.py write %t/mse.npz x=f4:10,28,28,1 y=f4:10,10
// RUN: kcc evaluate %kcc_src/examples/mlp.json --data %t/d.npz --batch 4 | FileCheck %s
// RUN: kcc evaluate %kcc_src/examples/mlp.json --data %t/d.npz --mode=interpreted | FileCheck %s
// RUN: kcc evaluate %kcc_src/examples/mlp.json --data %t/mse.npz --loss mean_squared_error --metrics binary_accuracy | FileCheck %s --check-prefix=MSE
// RUN: not kcc evaluate %kcc_src/examples/mlp.json --data %t/noy.npz 2>&1 | FileCheck %s --check-prefix=NOY
// RUN: not kcc evaluate %kcc_src/examples/mlp.json --data %t/short.npz 2>&1 | FileCheck %s --check-prefix=SHORT
// RUN: not kcc evaluate %kcc_src/examples/mlp.json --data %t/range.npz 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not kcc evaluate %kcc_src/examples/mlp.json --data %t/mse.npz 2>&1 | FileCheck %s --check-prefix=SPARSE

// An untrained 10-class softmax: a loss near ln 10; the same numbers in
// both modes, whatever the batch.
// CHECK: 10 examples of {{.*}}d.npz
// CHECK-NEXT: loss: 2.{{[0-9]+}} - accuracy: 0.{{[0-9]+}}

// MSE: loss: 0.{{[0-9]+}} - binary_accuracy: 0.{{[0-9]+}}{{$}}

// NOY: kcc: error: {{.*}}noy.npz: no target array 'y' (or 'dense_2'); the archive holds: x
// SHORT: kcc: error: {{.*}}short.npz: x has 10 examples ({{.*}}short.npz: array 'x') but y has 9 ({{.*}}short.npz: array 'y'): they must have as many
// RANGE: kcc: error: {{.*}}range.npz: array 'y': label 10 of example 10 is not a class: sparse_categorical_crossentropy takes integers in [0, 10)
// SPARSE: kcc: error: {{.*}}mse.npz: array 'y': expected labels of shape [N], found [10, 10] (float32)
