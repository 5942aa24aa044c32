// A flag the command does not use is an error naming the commands that take
// it (llvm::cl accepts the compile command's options in every subcommand),
// never silently ignored.
// RUN: rm -rf %t && mkdir -p %t
// RUN: python3 %S/Inputs/npy.py write %t/d.npz x=f4:8,28,28,1 y=i8:8:labels:10
// RUN: not kcc train %kcc_src/examples/mlp.json --data %t/d.npz --emit=llvm 2>&1 | FileCheck %s --check-prefix=EMIT
// RUN: not kcc train %kcc_src/examples/mlp.json --data %t/d.npz -o %t/out.ll 2>&1 | FileCheck %s --check-prefix=OUT
// RUN: not kcc train %kcc_src/examples/mlp.json --data %t/d.npz --mcpu=x86-64 2>&1 | FileCheck %s --check-prefix=OPT
// RUN: not kcc bench --model=mlp --dump-dir=%t/dump 2>&1 | FileCheck %s --check-prefix=BENCHDUMP
// RUN: not kcc predict %kcc_src/examples/mlp.json --data %t/d.npz -o %t/p.npy --optimizer=sgd 2>&1 | FileCheck %s --check-prefix=PREDICT
// RUN: not kcc evaluate %kcc_src/examples/mlp.json --data %t/d.npz --lr 0.1 2>&1 | FileCheck %s --check-prefix=EVALUATE
// RUN: not ls %t/out.ll %t/dump %t/p.npy

// EMIT: kcc: error: --emit is not an option of kcc train: it is one of the compile command (kcc <model>)
// OUT: kcc: error: -o is not an option of kcc train: it is one of the compile command (kcc <model>)
// OPT: kcc: error: --mcpu is not an option of kcc train
// BENCHDUMP: kcc: error: --dump-dir is not an option of kcc bench: it is one of the compile command (kcc <model>) and kcc train
// PREDICT: kcc: error: --optimizer is not an option of kcc predict: it is one of the compile command (kcc <model>), kcc train and kcc bench
// EVALUATE: kcc: error: --lr is not an option of kcc evaluate: it is one of the compile command (kcc <model>), kcc train and kcc bench
