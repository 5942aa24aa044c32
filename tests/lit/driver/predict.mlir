// kcc predict: a model's outputs on the arrays of a .npz, written as .npy
// or .npz; inputs cast to the model's dtype; bad input named with the file,
// the array and both shapes, and never a partial output.
// RUN: rm -rf %t && mkdir -p %t
// RUN: python3 %S/Inputs/npy.py write %t/d.npz x=f4:6,28,28,1 y=i8:6:labels:10
// RUN: python3 %S/Inputs/npy.py write %t/d64.npz x=f8:6,28,28,1
// RUN: python3 %S/Inputs/npy.py write %t/named.npz input_layer=i4:2,28,28,1
// RUN: python3 %S/Inputs/npy.py write %t/nox.npz y=i8:6:labels:10
// RUN: python3 %S/Inputs/npy.py write %t/flat.npz x=f4:6,784
// RUN: python3 %S/Inputs/npy.py write %t/empty.npz x=f4:0,28,28,1
// RUN: kcc predict %kcc_src/examples/mlp.json --data %t/d.npz -o %t/p.npy --batch 4 | FileCheck %s
// RUN: python3 %S/Inputs/npy.py show %t/p.npy | FileCheck %s --check-prefix=NPY
// RUN: kcc predict %kcc_src/examples/mlp.json --data %t/d64.npz -o %t/p.npz --mode=interpreted | FileCheck %s --check-prefix=F64
// RUN: python3 %S/Inputs/npy.py show %t/p.npz | FileCheck %s --check-prefix=NPZ
// RUN: kcc predict %kcc_src/examples/mlp.json --data %t/named.npz -o %t/n.npy | FileCheck %s --check-prefix=NAMED
//
// Errors: nothing is written, an existing output is left as it was.
// RUN: echo keep > %t/old.npy
// RUN: not kcc predict %kcc_src/examples/mlp.json --data %t/nox.npz -o %t/old.npy 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not kcc predict %kcc_src/examples/mlp.json --data %t/flat.npz -o %t/old.npy 2>&1 | FileCheck %s --check-prefix=SHAPE
// RUN: not kcc predict %kcc_src/examples/mlp.json --data %t/empty.npz -o %t/old.npy 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: not kcc predict %kcc_src/examples/mlp.json --data %t/none.npz -o %t/old.npy 2>&1 | FileCheck %s --check-prefix=NOFILE
// RUN: cat %t/old.npy | FileCheck %s --check-prefix=KEEP
// RUN: not kcc predict %kcc_src/examples/mlp.json --data %t/d.npz -o %t/no/dir/p.npy 2>&1 | FileCheck %s --check-prefix=UNWRITABLE
// RUN: not kcc predict %kcc_src/examples/mlp.json --data %t/d.npz -o %t/p.txt 2>&1 | FileCheck %s --check-prefix=EXT
// RUN: not ls %t/no %t/p.txt
// RUN: ls -a %t | FileCheck %s --check-prefix=NOTMP

// CHECK: kcc: wrote {{.*}}p.npy: 'dense_2' f32[6, 10] for 6 examples of {{.*}}d.npz

// Softmax rows: each sums to 1.
// NPY: - <f4 (6, 10) rows 1.0000 1.0000 1.0000 1.0000 1.0000 1.0000

// F64: 'dense_2' f32[6, 10] for 6 examples
// NPZ: dense_2 <f4 (6, 10) rows 1.0000 1.0000 1.0000 1.0000 1.0000 1.0000

// NAMED: 'dense_2' f32[2, 10] for 2 examples

// MISSING: kcc: error: {{.*}}nox.npz: no array 'x' (or 'input_layer', the input layer's name); the file has y
// SHAPE: kcc: error: {{.*}}flat.npz: array 'x' has shape [6, 784] but the model's input 'input_layer' takes [N, 28, 28, 1]
// EMPTY: kcc: error: {{.*}}empty.npz: array 'x' holds no examples
// NOFILE: kcc: error: {{.*}}none.npz: cannot open: No such file or directory
// KEEP: keep
// UNWRITABLE: kcc: error: {{.*}}no/dir/p.npy: cannot write: No such file or directory
// EXT: kcc: error: -o {{.*}}p.txt: the output must be a .npy or .npz file
// NOTMP-NOT: kcc-tmp
