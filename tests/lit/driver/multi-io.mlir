// Models of several inputs or outputs (Keras fixtures, tests/fixtures/keras/
// multi): kcc predict takes one array per input layer, by name, and writes
// one array per output layer to a .npz; a missing input array is an error
// naming the layer and the file. kcc train and kcc evaluate take the same
// archives (one array per input and per output layer, by name; the Keras-
// written fixtures' numbers are checked in tests/e2e/FitParityTest.cpp); a
// missing target names the output and the names expected, and nothing is
// written.
// RUN: rm -rf %t && mkdir -p %t
// RUN: python3 %S/Inputs/npy.py write %t/two.npz image=f4:5,28,28,1 pixels=f8:5,784
// RUN: python3 %S/Inputs/npy.py write %t/noimage.npz pixels=f4:5,784
// RUN: python3 %S/Inputs/npy.py write %t/rows.npz image=f4:5,28,28,1 pixels=f4:4,784
// RUN: python3 %S/Inputs/npy.py write %t/one.npz x=f4:3,28,28,1
// RUN: kcc predict %kcc_src/tests/fixtures/keras/multi/two_inputs_adam.keras --data %t/two.npz -o %t/p.npz --batch 2 | FileCheck %s --check-prefix=TWO
// RUN: python3 %S/Inputs/npy.py show %t/p.npz | FileCheck %s --check-prefix=TWONPZ
// RUN: kcc predict %kcc_src/tests/fixtures/keras/multi/multi_output.keras --data %t/one.npz -o %t/heads.npz --mode=interpreted | FileCheck %s --check-prefix=HEADS
// RUN: not kcc predict %kcc_src/tests/fixtures/keras/multi/two_inputs_adam.keras --data %t/noimage.npz -o %t/bad.npz 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not kcc predict %kcc_src/tests/fixtures/keras/multi/two_inputs_adam.keras --data %t/rows.npz -o %t/bad.npz 2>&1 | FileCheck %s --check-prefix=ROWS
// RUN: not kcc predict %kcc_src/tests/fixtures/keras/multi/multi_output.keras --data %t/one.npz -o %t/bad.npy 2>&1 | FileCheck %s --check-prefix=NPY
// RUN: not ls %t/bad.npz %t/bad.npy
// RUN: not kcc train %kcc_src/tests/fixtures/keras/multi/two_inputs_adam.keras --data %t/two.npz --save %t/m.keras 2>&1 | FileCheck %s --check-prefix=TRAIN
// RUN: not ls %t/m.keras
// RUN: python3 %S/Inputs/npy.py write %t/heads.npz image=f4:12,28,28,1 class=i4:12:labels:10 value=f4:12,1 sample_weight=f4:12
// RUN: python3 %S/Inputs/npy.py write %t/perhead.npz image=f4:12,28,28,1 class=i4:12:labels:10 value=f4:12,1 sample_weight_class=f4:12
// RUN: kcc train %kcc_src/tests/fixtures/keras/multi/multi_output.keras --data %t/heads.npz --validation-split 0.25 --batch 4 --epochs 2 --verbose 2 --shuffle=false --save %t/heads.keras | FileCheck %s --check-prefix=FIT
// RUN: kcc evaluate %t/heads.keras --data %t/heads.npz --batch 5 | FileCheck %s --check-prefix=EVAL
// A folder of per-name .npy files (memory-mapped) trains the same way.
// RUN: mkdir -p %t/heads && python3 -c "import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])" %t/heads.npz %t/heads
// RUN: kcc train %kcc_src/tests/fixtures/keras/multi/multi_output.keras --data %t/heads --batch 4 --epochs 1 --verbose 2 --shuffle=false | FileCheck %s --check-prefix=DIR
// RUN: rm %t/heads/value.npy && not kcc train %kcc_src/tests/fixtures/keras/multi/multi_output.keras --data %t/heads 2>&1 | FileCheck %s --check-prefix=NOVALUE
// RUN: not kcc train %kcc_src/tests/fixtures/keras/multi/multi_output.keras --data %t/perhead.npz 2>&1 | FileCheck %s --check-prefix=PERHEAD
// RUN: not kcc train %kcc_src/tests/fixtures/keras/multi/multi_output.keras --data %t/heads.npz --class-weight 0:1,1:5 --save %t/cw.keras 2>&1 | FileCheck %s --check-prefix=CLASSW
// RUN: not ls %t/cw.keras

// TWO: kcc: wrote {{.*}}p.npz: 'label' f32[5, 10] for 5 examples of {{.*}}two.npz
// TWONPZ: label <f4 (5, 10) rows 1.0000 1.0000 1.0000 1.0000 1.0000
// HEADS: kcc: wrote {{.*}}heads.npz: 'class' f32[3, 10], 'value' f32[3, 1] for 3 examples
// MISSING: kcc: error: {{.*}}noimage.npz: no array 'image' for the model's input layer 'image' (one array per input, by name); the file has pixels
// ROWS: kcc: error: {{.*}}rows.npz: array 'pixels' has 4 examples but 'image' has 5: every input needs as many
// NPY: kcc: error: -o {{.*}}bad.npy: model 'multi_output' has 2 outputs; write them to a .npz (one array per output)
// TRAIN: kcc: error: {{.*}}two.npz: no target array 'y' (or 'label'); the archive holds: image, pixels
// FIT: kcc: training multi_output ({{.*}}class: sparse_categorical_crossentropy, value: mean_squared_error) on 9 examples, validating on 3
// FIT: Epoch 2/2
// FIT-NEXT: 3/3 - {{.*}} - loss: {{[0-9.]+}} - class_accuracy: {{[0-9.]+}} - class_loss: {{[0-9.]+}} - value_loss: {{[0-9.]+}} - val_loss: {{[0-9.]+}} - val_class_accuracy: {{[0-9.]+}} - val_class_loss: {{[0-9.]+}} - val_value_loss: {{[0-9.]+}}
// FIT: kcc: saved the model to {{.*}}heads.keras
// EVAL: 12 examples of {{.*}}heads.npz (weighted by sample_weight)
// EVAL-NEXT: loss: {{[0-9.]+}} - class_accuracy: {{[0-9.]+}} - class_loss: {{[0-9.]+}} - value_loss: {{[0-9.]+}}
// DIR: on 12 examples (memory-mapped)
// DIR: 3/3 - {{.*}} - loss: {{[0-9.]+}} - class_accuracy: {{[0-9.]+}} - class_loss: {{[0-9.]+}} - value_loss: {{[0-9.]+}}
// NOVALUE: kcc: error: {{.*}}heads: no file 'value.npy' for output 'value' (the model's outputs are 'class', 'value') in the folder; it holds: {{.*}}class.npy
// CLASSW: kcc: error: compile: class_weight is not supported for a model with several outputs (as in Keras)
// PERHEAD: kcc: error: {{.*}}perhead.npz: array 'sample_weight_class': per-output sample weights are not supported yet; give one 'sample_weight' array [N], which weighs every output's loss as a single Keras sample_weight does
