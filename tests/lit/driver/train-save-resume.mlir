// kcc train --save, --save-weights, --resume and --checkpoint: two epochs in
// one run equal, bit for bit, one epoch saved and a second resumed from the
// checkpoint (the same shuffled batches: the order is drawn from the seed
// and the epoch; 44 examples at batch 8 train a partial last batch too).
// ModelCheckpoint writes one file per epoch, or only on improvement, and
// every error is found before training, leaving no file behind.
// RUN: rm -rf %t && mkdir -p %t
// RUN: python3 %S/Inputs/npy.py write %t/d.npz x=f4:44,28,28,1 y=i8:44:labels:10
// RUN: python3 %S/Inputs/npy.py write %t/v.npz x=f4:16,28,28,1 y=i8:16:labels:10
//
// RUN: kcc train %kcc_src/examples/mlp.json --data %t/d.npz --batch 8 --epochs 2 --seed 3 --verbose 2 --save %t/two.keras --save-weights %t/two.weights.h5 | FileCheck %s --check-prefix=TWO
// RUN: kcc train %kcc_src/examples/mlp.json --data %t/d.npz --batch 8 --epochs 1 --seed 3 --verbose 2 --save %t/one.keras | FileCheck %s --check-prefix=ONE
// RUN: kcc train --resume %t/one.keras --data %t/d.npz --batch 8 --epochs 2 --seed 3 --verbose 2 --save %t/resumed.keras --save-weights %t/resumed.weights.h5 | FileCheck %s --check-prefix=RESUMED
// The weights: the same predictions, bit for bit (the .h5 files differ
// in HDF5's object timestamps only). The optimizer state: a third epoch
// resumed from each gives the same predictions again.
// RUN: kcc predict %t/two.keras --data %t/d.npz -o %t/two.npy
// RUN: kcc predict %t/resumed.keras --data %t/d.npz -o %t/resumed.npy
// RUN: cmp %t/two.npy %t/resumed.npy
// RUN: kcc train --resume %t/two.keras --data %t/d.npz --batch 8 --epochs 3 --seed 3 --verbose 0 --save %t/three-a.keras
// RUN: kcc train --resume %t/resumed.keras --data %t/d.npz --batch 8 --epochs 3 --seed 3 --verbose 0 --save %t/three-b.keras
// RUN: kcc predict %t/three-a.keras --data %t/d.npz -o %t/three-a.npy
// RUN: kcc predict %t/three-b.keras --data %t/d.npz -o %t/three-b.npy
// RUN: cmp %t/three-a.npy %t/three-b.npy
// RUN: not cmp -s %t/two.npy %t/three-a.npy
// Each run of --mode=both resumes from the same checkpoint.
// RUN: kcc train --resume %t/one.keras --data %t/d.npz --batch 8 --epochs 2 --seed 3 --verbose 2 --mode=both | FileCheck %s --check-prefix=BOTH
//
// TWO: kcc: saved the model to {{.*}}two.keras ({{[0-9.]+}} MB, epoch 2, 12 steps)
// TWO: kcc: saved the weights to {{.*}}two.weights.h5 ({{[0-9.]+}} MB, epoch 2, 12 steps)
// ONE: kcc: saved the model to {{.*}}one.keras ({{[0-9.]+}} MB, epoch 1, 6 steps)
// RESUMED: kcc: resuming from {{.*}}one.keras at epoch 2 (6 steps done)
// RESUMED: kcc: saved the model to {{.*}}resumed.keras ({{[0-9.]+}} MB, epoch 2, 12 steps)
// BOTH: compiled:    loss [[LOSS:[0-9.]+]]
// BOTH: interpreted: loss [[LOSS]]
//
// One checkpoint per epoch, named by the pattern; each resumes.
// RUN: cd %t && kcc train %kcc_src/examples/mlp.json --data d.npz --validation-data v.npz --batch 8 --epochs 3 --seed 3 --verbose 0 --checkpoint=filepath=ck-{epoch:02d}.keras
// RUN: ls %t | FileCheck %s --check-prefix=EVERY
// RUN: kcc train --resume %t/ck-02.keras --data %t/d.npz --batch 8 --epochs 3 --seed 3 --verbose 2 | FileCheck %s --check-prefix=CK
// EVERY: ck-01.keras
// EVERY-NEXT: ck-02.keras
// EVERY-NEXT: ck-03.keras
// CK: resuming from {{.*}}ck-02.keras at epoch 3 (12 steps done)
//
// save_best_only: a learning rate this large makes val_loss stop improving
// after the first epoch; only the improvement is saved.
// RUN: mkdir %t/best && cd %t/best && kcc train %kcc_src/examples/mlp.json --data ../d.npz --validation-data ../v.npz --batch 8 --epochs 3 --seed 3 --lr 0.05 --verbose 2 --checkpoint=filepath=best-{epoch:02d}-{val_loss:.4f}.keras,monitor=val_loss,save_best_only=true,mode=min,verbose=1 | FileCheck %s --check-prefix=BEST
// RUN: ls %t/best | FileCheck %s --check-prefix=BESTFILES
// BEST: Epoch 1: val_loss improved from inf to [[V:[0-9.]+]], saving model to best-01-
// BEST: Epoch 2: val_loss did not improve from [[V]]
// BEST: Epoch 3: val_loss did not improve from [[V]]
// BESTFILES: best-01-{{[0-9.]+}}.keras
// BESTFILES-NOT: best-0
// save_weights_only writes .weights.h5 files.
// RUN: mkdir %t/w && cd %t/w && kcc train %kcc_src/examples/mlp.json --data ../d.npz --batch 8 --epochs 2 --seed 3 --verbose 0 --checkpoint=filepath=w-{epoch}.weights.h5,monitor=loss,save_weights_only=true
// RUN: ls %t/w | FileCheck %s --check-prefix=WFILES
// WFILES: w-1.weights.h5
// WFILES-NEXT: w-2.weights.h5
//
// Errors, before training and with no file written.
// RUN: mkdir %t/err && cd %t/err
// RUN: not kcc train %kcc_src/examples/mlp.json --data ../d.npz --batch 8 --save nodir/m.keras 2>&1 | FileCheck %s --check-prefix=NODIR
// RUN: not kcc train %kcc_src/examples/mlp.json --data ../d.npz --batch 8 --save-weights nodir/m.weights.h5 2>&1 | FileCheck %s --check-prefix=NODIRW
// RUN: not kcc train %kcc_src/examples/mlp.json --data ../d.npz --batch 8 --checkpoint=filepath=nodir/c-{epoch}.keras 2>&1 | FileCheck %s --check-prefix=NODIRC
// RUN: not kcc train %kcc_src/examples/mlp.json --data ../d.npz --batch 8 --save m.h5 2>&1 | FileCheck %s --check-prefix=SUFFIX
// RUN: not kcc train %kcc_src/examples/mlp.json --data ../d.npz --batch 8 --checkpoint=filepath=c.h5 2>&1 | FileCheck %s --check-prefix=CKSUFFIX
// RUN: not kcc train %kcc_src/examples/mlp.json --data ../d.npz --batch 8 --checkpoint=monitor=loss 2>&1 | FileCheck %s --check-prefix=NOPATH
// RUN: not kcc train %kcc_src/examples/mlp.json --data ../d.npz --batch 8 --mode=both --save m.keras 2>&1 | FileCheck %s --check-prefix=MODEBOTH
// RUN: not kcc train %kcc_src/examples/mlp.json --data ../missing.npz --batch 8 --save m.keras 2>&1 | FileCheck %s --check-prefix=NODATA
// RUN: not kcc train --resume missing.keras --data ../d.npz --batch 8 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: echo garbage > corrupt.keras
// RUN: not kcc train --resume corrupt.keras --data ../d.npz --batch 8 --save m.keras 2>&1 | FileCheck %s --check-prefix=CORRUPT
// RUN: not kcc train --resume ../one.keras --data ../d.npz --batch 8 --epochs 1 2>&1 | FileCheck %s --check-prefix=DONE
// RUN: not kcc train %kcc_src/examples/mlp.json --resume ../one.keras --data ../d.npz --batch 8 --epochs 2 2>&1 | FileCheck %s --check-prefix=TWOMODELS
// RUN: ls -a %t/err | FileCheck %s --check-prefix=NOFILES
// NODIR: kcc: error: nodir/m.keras: cannot write: No such file or directory
// NODIR-NOT: training
// NODIRW: kcc: error: nodir/m.weights.h5: cannot write: No such file or directory
// NODIRC: kcc: error: nodir/c-{epoch}.keras: cannot write: No such file or directory
// SUFFIX: kcc: error: --save m.h5: the file name must end in .keras
// CKSUFFIX: kcc: error: --checkpoint: the filepath must end in .keras (or .weights.h5 with save_weights_only=true), got 'c.h5'
// NOPATH: kcc: error: --checkpoint: needs filepath=PATTERN
// MODEBOTH: kcc: error: --save, --save-weights and --checkpoint save one run: give --mode=compiled or --mode=interpreted with them
// NODATA: kcc: error: {{.*}}missing.npz
// MISSING: kcc: error: missing.keras: cannot read: No such file or directory
// CORRUPT: kcc: error: corrupt.keras: not a .keras archive (zip)
// DONE: kcc: error: ../one.keras: trained for 1 epoch(s) already; --epochs is the total (Keras's epochs with initial_epoch): give more than 1
// TWOMODELS: kcc: error: --resume ../one.keras is the model: give no model file or --model with it
// NOFILES: .
// NOFILES-NEXT: ..
// NOFILES-NEXT: corrupt.keras
// NOFILES-EMPTY:
