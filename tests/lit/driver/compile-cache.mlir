// The persistent compile cache (KCC_CACHE_DIR): the first `kcc train`
// compiles and stores, the second loads the step and predict's forward from
// disk and trains to the same loss; a garbled entry is a miss with one note
// and is rewritten. --time-passes prints one report over the whole compile.
// RUN: rm -rf %t && mkdir -p %t
// RUN: bash -c 'for run in cold warm; do KCC_CACHE_DIR=%t/cache kcc train --model=mlp --steps-per-epoch 3 --batch 16; done' 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: bash -c 'for f in %t/cache/*.kcc; do truncate -s 100 $f; done'
// RUN: env KCC_CACHE_DIR=%t/cache kcc train --model=mlp --steps-per-epoch 3 --batch 16 2>&1 | FileCheck %s --check-prefix=CORRUPT
// RUN: env KCC_CACHE_DIR=%t/cache kcc train --model=mlp --steps-per-epoch 3 --batch 16 --time-passes 2>&1 | FileCheck %s --check-prefix=TIMEWARM
// RUN: env KCC_CACHE_DIR=off kcc train --model=mlp --steps-per-epoch 3 --batch 16 2>&1 | FileCheck %s --check-prefix=OFF
// RUN: kcc --model=mlp --emit=obj -o %t/mlp.o --time-passes 2>&1 | FileCheck %s --check-prefix=TIMEOBJ

// TWICE: kcc: compiled train_step for batch 16 in {{[0-9]+}} ms
// TWICE: 3/3 [==============================] {{.*}} - loss: [[LOSS:[0-9.]+]] - accuracy: [[ACC:[0-9.]+]]
// TWICE: kcc: compiled forward for batch 16
// TWICE: test accuracy: [[TEST:[0-9.]+]]
// TWICE-NOT: kcc: compiled
// TWICE: kcc: loaded train_step for batch 16 from the cache in {{[0-9]+}} ms
// TWICE-NOT: kcc: compiled
// TWICE: 3/3 [==============================] {{.*}} - loss: [[LOSS]] - accuracy: [[ACC]]
// TWICE-NOT: kcc: compiled
// TWICE: kcc: loaded forward for batch 16 from the cache in {{[0-9]+}} ms
// TWICE: test accuracy: [[TEST]]

// CORRUPT: kcc: note: compile cache: ignoring {{.*}}.kcc (truncated: 100 of {{[0-9]+}} bytes); compiling
// CORRUPT-NEXT: kcc: compiled train_step for batch 16

// TIMEWARM: kcc: loaded train_step for batch 16 from the cache
// TIMEWARM: ... Execution time report ...
// TIMEWARM: kc-train-pipeline
// TIMEWARM: KcBuildTrainStep
// TIMEWARM: compile @train_step
// TIMEWARM-NEXT: compile cache key
// TIMEWARM-NEXT: disk cache lookup
// TIMEWARM-NEXT: JIT link
// TIMEWARM: Total

// OFF: kcc: compiled train_step for batch 16

// TIMEOBJ: ... Execution time report ...
// TIMEOBJ: import
// TIMEOBJ: kc-import-pipeline
// TIMEOBJ: kc-train-pipeline
// TIMEOBJ: kc-cpu-pipeline
// TIMEOBJ: KcFuseElementwise
// TIMEOBJ: OneShotBufferize
// TIMEOBJ: LLVM IR translation
// TIMEOBJ: LLVM -O3 and machine code
// TIMEOBJ: Total
