// kcc train with Keras's weighting: per-example sample_weight from the data
// file and --class-weight (a JSON object or CLASS:WEIGHT pairs), and every
// bad --class-weight as an error naming the flag. Weights of 1 everywhere
// train exactly as no weights do.
// RUN: rm -rf %t && python3 %S/Inputs/make_npz.py %t %kcc_src/examples/mlp.json
// RUN: kcc train %kcc_src/examples/mlp.json --data %t/good.npz --batch 48 --epochs 1 --shuffle=false > %t/plain.txt 2>&1
// RUN: kcc train %kcc_src/examples/mlp.json --data %t/weights.npz --batch 48 --epochs 1 --shuffle=false > %t/ones.txt 2>&1
// RUN: kcc train %kcc_src/examples/mlp.json --data %t/good.npz --batch 48 --epochs 1 --shuffle=false --class-weight '{"0": 1, "1": 1}' > %t/json.txt 2>&1
// RUN: kcc train %kcc_src/examples/mlp.json --data %t/good.npz --batch 48 --epochs 1 --shuffle=false --class-weight 0:1,9:1 > %t/pairs.txt 2>&1
// RUN: cat %t/plain.txt %t/ones.txt %t/json.txt %t/pairs.txt | FileCheck %s --check-prefix=SAME
//
// Weights that matter change the loss, not the (unweighted) accuracy.
// RUN: kcc train %kcc_src/examples/mlp.json --data %t/ramp.npz --batch 48 --epochs 1 --shuffle=false 2>&1 | FileCheck %s --check-prefix=RAMP
// RUN: kcc train %kcc_src/examples/mlp.json --data %t/good.npz --batch 48 --epochs 1 --shuffle=false --class-weight 0:0,1:5,2:0.5 2>&1 | FileCheck %s --check-prefix=CLASSES
//
// Errors, before anything trains.
// RUN: not kcc train %kcc_src/examples/mlp.json --data %t/good.npz --class-weight 0:1,12:5 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not kcc train %kcc_src/examples/mlp.json --data %t/good.npz --class-weight 0:-1 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not kcc train %kcc_src/examples/mlp.json --data %t/good.npz --class-weight 0:inf 2>&1 | FileCheck %s --check-prefix=INF
// RUN: not kcc train %kcc_src/examples/mlp.json --data %t/good.npz --class-weight '{"0": 1' 2>&1 | FileCheck %s --check-prefix=JSON
// RUN: not kcc train %kcc_src/examples/mlp.json --data %t/good.npz --class-weight 0=1 2>&1 | FileCheck %s --check-prefix=PAIR
// RUN: not kcc train %kcc_src/examples/mlp.json --data %t/good.npz --class-weight a:1 2>&1 | FileCheck %s --check-prefix=NOTCLASS
// RUN: not kcc train %kcc_src/examples/mlp.json --data %t/weights.npz --class-weight 0:1 2>&1 | FileCheck %s --check-prefix=BOTH
// RUN: not kcc train %kcc_src/examples/mlp.json --data %t/nanweight.npz 2>&1 | FileCheck %s --check-prefix=NANWEIGHT

// SAME: 2/2 [==============================] - {{.*}} - loss: [[LOSS:[0-9.]+]] - accuracy: [[ACC:[0-9.]+]]
// SAME: 2/2 [==============================] - {{.*}} - loss: [[LOSS]] - accuracy: [[ACC]]
// SAME: 2/2 [==============================] - {{.*}} - loss: [[LOSS]] - accuracy: [[ACC]]
// SAME: 2/2 [==============================] - {{.*}} - loss: [[LOSS]] - accuracy: [[ACC]]

// RAMP: on 64 examples
// RAMP: 2/2 [==============================] - {{.*}} - loss: {{[0-9.]+}} - accuracy: {{[0-9.]+}}
// CLASSES: on 64 examples
// CLASSES: 2/2 [==============================] - {{.*}} - loss: {{[0-9.]+}} - accuracy: {{[0-9.]+}}

// RANGE: kcc: error: --class-weight: class_weight: class 12 is out of range: the model predicts 10 classes (0 to 9)
// NEGATIVE: kcc: error: compile: --class-weight: the weight of class 0 must be finite and >= 0, got -1
// INF: kcc: error: compile: --class-weight: the weight of class 0 must be finite and >= 0, got inf
// JSON: kcc: error: compile: --class-weight: not valid JSON:
// PAIR: kcc: error: compile: --class-weight: '0=1' is not CLASS:WEIGHT (e.g. 0:1,1:5)
// NOTCLASS: kcc: error: compile: --class-weight: class 'a' is not a class index (an integer >= 0)
// BOTH: kcc: error: fit: class_weight and sample_weight cannot be used together (as in Keras)
// NANWEIGHT: kcc: error: {{.*}}nanweight.npz: array 'sample_weight': the weight of example 7 is nan, not a finite number
