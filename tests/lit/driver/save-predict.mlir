// A .keras archive kcc saved (through the library API: the checkpoint
// example) is a model kcc predict and evaluate load, and a checkpoint that
// resumes at its step count. Members as Keras writes them, kcc's metadata
// block with the epoch and the step count.
// RUN: rm -rf %t && mkdir -p %t
// RUN: python3 %S/Inputs/npy.py write %t/d.npz x=f4:32,28,28,1 y=i8:32:labels:10
// RUN: kcc-example-checkpoint train %kcc_src/examples/mlp.json %t/d.npz 4 8 %t/m.keras | FileCheck %s --check-prefix=TRAIN
// RUN: python3 -c "import zipfile, sys; z = zipfile.ZipFile(sys.argv[1]); print(z.namelist(), {i.compress_type for i in z.infolist()}); print(z.read('metadata.json').decode())" %t/m.keras | FileCheck %s --check-prefix=ZIP
// RUN: kcc predict %t/m.keras --data %t/d.npz -o %t/p.npy | FileCheck %s --check-prefix=PREDICT
// RUN: kcc evaluate %t/m.keras --data %t/d.npz | FileCheck %s --check-prefix=EVAL
// RUN: kcc-example-checkpoint resume %t/m.keras %t/d.npz 2 8 %t/m2.keras | FileCheck %s --check-prefix=RESUME
// RUN: kcc-example-checkpoint resume %t/m2.keras %t/d.npz 1 8 %t/w.weights.h5 | FileCheck %s --check-prefix=WEIGHTS
// RUN: ls -a %t | FileCheck %s --check-prefix=NOTMP

// TRAIN: trained 4 steps (iterations 4), last loss {{[0-9.]+}}, saved {{.*}}m.keras
// ZIP: ['metadata.json', 'config.json', 'model.weights.h5'] {0}
// ZIP: {"date_saved":"{{.*}}","kcc":{"epoch":1,"iterations":4,"seed":"0"},"keras_version":"3.15.1"}
// PREDICT: kcc: wrote {{.*}}p.npy: 'dense_2' f32[32, 10] for 32 examples
// EVAL: loss: {{[0-9.]+}} - accuracy: {{[0-9.]+}}
// RESUME: trained 2 steps (iterations 6)
// WEIGHTS: trained 1 steps (iterations 7), last loss {{[0-9.]+}}, saved {{.*}}w.weights.h5
// NOTMP-NOT: kcc-tmp
