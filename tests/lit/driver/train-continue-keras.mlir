// `kcc train saved.keras` on a model Keras saved with its optimizer goes on
// as Keras's load_model + fit does: the optimizer's slots and iteration
// count carry on (Adam's bias correction at steps 4-6, SGD's momentum) and
// the epochs count from 0 (unlike --resume). Checked against Keras itself
// (scripts/keras-fixtures/make_continue_fixtures.py): 3 steps' losses and
// the continued model's outputs within 1e-5.
// RUN: rm -rf %t && mkdir -p %t
// RUN: python3 %S/Inputs/fashion_batch.py %t/b.npz 32
// RUN: python3 %S/Inputs/fashion_batch.py %t/x4.npz 4
// RUN: kcc train %kcc_src/tests/fixtures/keras/continue/continue_adam.keras --data %t/b.npz --batch 32 --epochs 3 --shuffle=false --csv-log %t/adam.csv --save %t/adam.keras | FileCheck %s --check-prefix=ADAM
// RUN: kcc predict %t/adam.keras --data %t/x4.npz -o %t/adam.npy
// RUN: python3 %S/Inputs/compare_continue.py %kcc_src/tests/fixtures/keras/continue/continue.json adam %t/adam.csv %t/adam.npy 1e-5 | FileCheck %s --check-prefix=CMP-ADAM
// RUN: kcc train %kcc_src/tests/fixtures/keras/continue/continue_sgd_momentum.keras --data %t/b.npz --batch 32 --epochs 3 --shuffle=false --csv-log %t/sgd.csv --save %t/sgd.keras
// RUN: kcc predict %t/sgd.keras --data %t/x4.npz -o %t/sgd.npy
// RUN: python3 %S/Inputs/compare_continue.py %kcc_src/tests/fixtures/keras/continue/continue.json sgd_momentum %t/sgd.csv %t/sgd.npy 1e-5 | FileCheck %s --check-prefix=CMP-SGD
// AMSGrad's velocity_hat and centered RMSprop's average_gradient, read in
// Keras's variable order and updated by Keras's formulas.
// RUN: kcc train %kcc_src/tests/fixtures/keras/continue/continue_adam_amsgrad.keras --data %t/b.npz --batch 32 --epochs 3 --shuffle=false --verbose 0 --csv-log %t/amsgrad.csv --save %t/amsgrad.keras
// RUN: kcc predict %t/amsgrad.keras --data %t/x4.npz -o %t/amsgrad.npy
// RUN: python3 %S/Inputs/compare_continue.py %kcc_src/tests/fixtures/keras/continue/continue.json adam_amsgrad %t/amsgrad.csv %t/amsgrad.npy 1e-5 | FileCheck %s --check-prefix=CMP-AMSGRAD
// RUN: kcc train %kcc_src/tests/fixtures/keras/continue/continue_rmsprop_centered.keras --data %t/b.npz --batch 32 --epochs 3 --shuffle=false --verbose 0 --csv-log %t/centered.csv --save %t/centered.keras
// RUN: kcc predict %t/centered.keras --data %t/x4.npz -o %t/centered.npy
// RUN: python3 %S/Inputs/compare_continue.py %kcc_src/tests/fixtures/keras/continue/continue.json rmsprop_centered %t/centered.csv %t/centered.npy 1e-5 | FileCheck %s --check-prefix=CMP-CENTERED
// A flag that switches the optimizer starts a new one (Keras's compile()).
// RUN: kcc train %kcc_src/tests/fixtures/keras/continue/continue_adam.keras --data %t/b.npz --batch 32 --optimizer=sgd | FileCheck %s --check-prefix=FRESH

// ADAM: kcc: training continue_adam (compiled, batch 32, adam
// ADAM-NEXT: kcc: continuing the adam state saved in {{.*}}continue_adam.keras (3 steps done)
// ADAM: Epoch 1/3
// ADAM: kcc: saved the model to {{.*}}, epoch 3, 6 steps)

// CMP-ADAM: adam: 3 epochs, max loss difference
// CMP-SGD: sgd_momentum: 3 epochs, max loss difference
// CMP-AMSGRAD: adam_amsgrad: 3 epochs, max loss difference
// CMP-CENTERED: rmsprop_centered: 3 epochs, max loss difference

// FRESH: kcc: training continue_adam (compiled, batch 32, sgd
// FRESH-NOT: continuing
