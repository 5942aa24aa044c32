// What kcc's commands print. --verbose 0 prints nothing but errors; a step
// under a millisecond shows in microseconds as Keras's progress bar does
// (162us/step; ms on a loaded machine); bare `kcc` prints its usage (standard input is read only
// for -); kcc bench --json writes the shortest round-trip numbers; the NaN
// note names the data array (x) that holds the NaN.
// RUN: rm -rf %t && mkdir -p %t
// RUN: python3 %S/Inputs/npy.py write %t/d.npz x=f4:256,28,28,1 y=i8:256:labels:10
// RUN: kcc train --model=mlp --data %t/d.npz --batch 4 --verbose 0 --save %t/m.keras > %t/quiet.txt 2>&1
// RUN: count 0 < %t/quiet.txt
// RUN: ls %t/m.keras
// RUN: python3 %S/Inputs/npy.py write %t/tiny.npz x=f4:256,4 y=i8:256:labels:3
// RUN: kcc train %S/Inputs/tiny.json --data %t/tiny.npz --batch 4 --verbose 2 | FileCheck %s --check-prefix=MICRO
// RUN: not kcc | FileCheck %s --check-prefix=USAGE
// RUN: not kcc --emit=kc 2>&1 | FileCheck %s --check-prefix=NOMODEL
// RUN: kcc bench --model=mlp --batch 4 --repetitions 1 --steps 2 --warmup 0 --json | FileCheck %s --check-prefix=JSON
// RUN: python3 -c "import sys; sys.path.insert(0, sys.argv[1]); import npy, zipfile; x = [0.5] * (8 * 784); x[3] = float('nan'); z = zipfile.ZipFile(sys.argv[2], 'w'); z.writestr('x.npy', npy.npy_bytes('f4', (8, 28, 28, 1), x)); z.writestr('y.npy', npy.npy_bytes('i8', (8,), [i %% 10 for i in range(8)]))" %S/Inputs %t/nan.npz
// RUN: not kcc train --model=mlp --data %t/nan.npz --batch 8 2>&1 | FileCheck %s --check-prefix=NAN

// MICRO: 64/64 - {{[0-9]+}}s - {{[0-9]+(us|ms)}}/step - loss:

// USAGE: OVERVIEW: kcc: compiles Keras-style training steps
// USAGE: kcc train <model> [options]
// NOMODEL: kcc: error: no model: give a .mlir file (- for standard input)

// JSON: "compiled_ms": {{[0-9.e-]+}},
// JSON-NOT: {{[.][0-9]*(00000|99999)[0-9],?$}}

// NAN: kcc: error: step 1 {{.*}}loss is nan
// NAN: kcc: note: first non-finite value: {{.*}}; non-finite inputs: x
