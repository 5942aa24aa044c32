// Models of several inputs or outputs (Keras fixtures, tests/fixtures/keras/
// multi): kcc predict takes one array per input layer, by name, and writes
// one array per output layer to a .npz; a missing input array is an error
// naming the layer and the file. Training from data files feeds one input
// and one output: the others stop before anything runs, saying so.
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

// TWO: kcc: wrote {{.*}}p.npz: 'label' f32[5, 10] for 5 examples of {{.*}}two.npz
// TWONPZ: label <f4 (5, 10) rows 1.0000 1.0000 1.0000 1.0000 1.0000
// HEADS: kcc: wrote {{.*}}heads.npz: 'class' f32[3, 10], 'value' f32[3, 1] for 3 examples
// MISSING: kcc: error: {{.*}}noimage.npz: no array 'image' for the model's input layer 'image' (one array per input, by name); the file has pixels
// ROWS: kcc: error: {{.*}}rows.npz: array 'pixels' has 4 examples but 'image' has 5: every input needs as many
// NPY: kcc: error: -o {{.*}}bad.npy: model 'multi_output' has 2 outputs; write them to a .npz (one array per output)
// TRAIN: kcc: error: the model has 2 inputs ('image', 'pixels') and 1 output ('label'); data files feed one input and one output
