// A learning rate of 1e30 blows the weights up within two SGD steps: the
// loss turns NaN, and both modes must say so (the compiled step never hides
// a NaN). TerminateOnNaN is on by default; --terminate-on-nan=false runs on.
// RUN: kcc train --model=mlp --mode=both --optimizer=sgd --lr=1e30 --epochs 1 --steps-per-epoch 5 --batch 16 --terminate-on-nan=false 2>&1 | FileCheck %s --check-prefix=BOTH
// RUN: not kcc train --model=cnn --optimizer=sgd --lr=1e30 --epochs 1 --steps-per-epoch 5 --batch 16 --terminate-on-nan 2>&1 | FileCheck %s --check-prefix=TERM

// BOTH: 5/5 [==============================] - {{.*}} - loss: nan
// BOTH: compiled: loss nan
// BOTH-NEXT: interpreted: loss nan
// BOTH-NEXT: both losses are non-finite
// BOTH-NOT: error

// TERM: kcc: error: step 2 (epoch 1, batch 2/5, compiled): loss is nan; terminating training (--terminate-on-nan)
// TERM-NEXT: kcc: note: first non-finite value: layer '{{conv2d(_1)?|dense(_1)?}}' (kc.{{[a-z0-9_]+}}, op {{[0-9]+}} of @train_step): {{[0-9]+}} NaN, {{[0-9]+}} inf in [16,
// TERM-NOT: test accuracy
