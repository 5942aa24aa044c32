// Allocations that fit kcc's limits but not the process: under `ulimit -v
// 4194304` (4 GiB of address space) kcc refuses what it cannot allocate,
// saying how much it needs, instead of std::bad_alloc. (A sanitized build
// cannot cap its address space: see lit.cfg.py.)
// REQUIRES: address-space-limit
// RUN: rm -rf %t && split-file %s %t
//
// kcc train takes min(batch, examples) as Keras does; kcc bench builds the
// step at the batch given.
// RUN: not bash -c 'ulimit -v 4194304 && exec kcc bench --model=mlp --batch 1000000000' 2>&1 | FileCheck %s --check-prefix=BATCH
//
// Within the limits but not within 4 GiB: the memory check refuses first.
// The weights of a 10^6 x 10^5 Dense (372.5 GiB):
// (kcc train refuses it sooner: its input does not fit Fashion-MNIST.)
// RUN: not bash -c 'ulimit -v 4194304 && exec kcc bench %t/big.json' 2>&1 | FileCheck %s --check-prefix=WEIGHTS
// The step at batch 10^7 (kcc bench allocates its input batch first), and
// a batch of 10^6 interpreted:
// RUN: not bash -c 'ulimit -v 4194304 && exec kcc bench --model=mlp --batch 10000000' 2>&1 | FileCheck %s --check-prefix=ARENA
// RUN: bash -c 'ulimit -v 4194304 && exec kcc train --model=mlp --mode=interpreted --batch 1000000 --steps-per-epoch 1 --epochs 1' 2>&1 | FileCheck %s --check-prefix=INTERP

// BATCH: kcc: error: {{(mlp: )?}}traceForward: input 0 of 'mlp' at batch 1000000000: f32[1000000000, 28, 28, 1] needs 2.9 TiB, over the limit of 1.0 TiB per tensor
// WEIGHTS: kcc: error: layer 'd' (Dense): its weights would need 372.5 GiB; {{[0-9.]+}} GiB are available (RLIMIT_AS, ulimit -v)
// ARENA: kcc: error: {{(compile @train_step: the arena|an array of f32\[10000000, 28, 28, 1\])}} would need {{[0-9.]+}} GiB; {{[0-9.]+}} GiB are available (RLIMIT_AS, ulimit -v)
// A batch larger than the dataset is one batch of every example, as in
// Keras, and its step fits in the 4 GiB (the interpreter's own per-op check
// is unit-tested: SizeLimitsTest).
// INTERP: on 60000 examples
// INTERP: 1/1 [==============================]

//--- big.json
{"class_name": "Sequential", "config": {"name": "m", "layers": [
  {"class_name": "InputLayer", "config": {"batch_shape": [null, 1000000], "name": "in"}},
  {"class_name": "Dense", "config": {"name": "d", "units": 100000}}]}}
