// kcc train --save writes a model with BatchNormalization, ReLU layers, Add
// and GlobalAveragePooling2D (the ResNet fixture, its Keras 3 config kept as
// imported; the generated configs of these classes are in KerasConfig.cpp):
// two epochs in one run predict, bit for bit, what one saved epoch resumed for a second predicts,
// and the saved config keeps every layer. (Keras loads the saved file and
// predicts the same within 1e-7, checked by hand with Keras 3.)
// RUN: rm -rf %t && mkdir -p %t
// RUN: python3 %S/Inputs/npy.py write %t/d.npz x=f4:16,28,28,1 y=i8:16:labels:10
// RUN: kcc train %kcc_src/tests/fixtures/keras/resnet.keras --data %t/d.npz --batch 8 --epochs 1 --seed 3 --verbose 2 --save %t/one.keras | FileCheck %s
// RUN: kcc train %kcc_src/tests/fixtures/keras/resnet.keras --data %t/d.npz --batch 8 --epochs 2 --seed 3 --verbose 0 --save %t/two.keras
// RUN: kcc train --resume %t/one.keras --data %t/d.npz --batch 8 --epochs 2 --seed 3 --verbose 0 --save %t/resumed.keras
// RUN: kcc predict %t/two.keras --data %t/d.npz -o %t/two.npy
// RUN: kcc predict %t/resumed.keras --data %t/d.npz -o %t/resumed.npy
// RUN: cmp %t/two.npy %t/resumed.npy
// RUN: unzip -p %t/one.keras config.json | python3 -c "import json,sys; print([l['class_name'] for l in json.load(sys.stdin)['config']['layers']])" | FileCheck %s --check-prefix=LAYERS
//
// CHECK: kcc: saved the model to {{.*}}one.keras ({{[0-9.]+}} kB, epoch 1, 2 steps)
// LAYERS: ['InputLayer', 'Conv2D', 'BatchNormalization', 'ReLU', 'Conv2D', 'BatchNormalization', 'ReLU', 'Conv2D', 'BatchNormalization', 'Add', 'ReLU', 'Conv2D', 'BatchNormalization', 'ReLU', 'Conv2D', 'Conv2D', 'BatchNormalization', 'BatchNormalization', 'Add', 'ReLU', 'GlobalAveragePooling2D', 'Dense']
