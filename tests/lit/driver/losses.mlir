// RUN: kcc train --help | FileCheck %s --check-prefix=HELP
// A loss with Keras's arguments on the command line.
// RUN: kcc --emit=train --loss='Huber(delta=2)' %S/Inputs/dense.mlir | FileCheck %s --check-prefix=HUBER
// RUN: kcc --emit=train --loss='binary_focal_crossentropy(gamma=3,label_smoothing=0.1)' %S/Inputs/dense.mlir | FileCheck %s --check-prefix=FOCAL
// Circle: the batch's pairwise similarities, from integer labels.
// RUN: kcc --emit=train --loss='circle(gamma=20)' %S/Inputs/dense.mlir | FileCheck %s --check-prefix=CIRCLE
// An argument the loss does not take, a bad value, a reduction kcc cannot fit.
// RUN: not kcc --emit=train --loss='categorical_generalized_cross_entropy(q=1)' %S/Inputs/dense.mlir 2>&1 | FileCheck %s --check-prefix=Q
// RUN: not kcc --emit=train --loss='huber(gamma=2)' %S/Inputs/dense.mlir 2>&1 | FileCheck %s --check-prefix=ARG
// RUN: not kcc --emit=train --loss='dice(axis=x)' %S/Inputs/dense.mlir 2>&1 | FileCheck %s --check-prefix=VALUE
// RUN: not kcc --emit=train --loss='mae(reduction=none)' %S/Inputs/dense.mlir 2>&1 | FileCheck %s --check-prefix=NONE
// An axis out of range for the prediction.
// RUN: not kcc --emit=train --loss='cosine_similarity(axis=2)' %S/Inputs/dense.mlir 2>&1 | FileCheck %s --check-prefix=AXIS
// Sample weights need one value per example.
// RUN: not kcc-opt %S/Inputs/dense.mlir --kc-build-train-step="loss=dice(axis=0) sample-weight=true" 2>&1 | FileCheck %s --check-prefix=WEIGHTED

// HELP: --loss=<string>
// HELP-SAME: huber(delta=2)
// HELP-SAME: mean_absolute_percentage_error
// HELP-SAME: categorical_focal_crossentropy, dice, tversky, ctc, categorical_generalized_cross_entropy, circle
// HELP: --metrics=<string>
// HELP-SAME: accuracy, acc, sparse_categorical_accuracy,
// HELP-SAME: pearson_correlation, concordance_correlation, TruePositives,
// HELP-SAME: OneHotMeanIoU, R2Score, RootMeanSquaredError, each with Keras's arguments

// HUBER-LABEL: func.func @train_step(
// HUBER-SAME: loss = "huber"
// HUBER: kc.compare  le
// HUBER: kc.select

// FOCAL-LABEL: func.func @train_step(
// FOCAL-SAME: loss = "binary_focal_crossentropy"
// FOCAL: kc.pow

// CIRCLE-LABEL: func.func @train_step(
// CIRCLE-SAME: tensor<4xi32> {kc.name = "target"
// CIRCLE-SAME: loss = "circle"
// CIRCLE: kc.matmul %[[E:.*]], %[[E]] {transpose_rhs = true} : tensor<4x2xf32>, tensor<4x2xf32> -> tensor<4x4xf32>

// Q: kcc: error: compile: loss categorical_generalized_cross_entropy: q must be in the interval (0, 1), got 1
// ARG: kcc: error: compile: loss huber takes no argument 'gamma' (it takes delta, reduction)
// VALUE: kcc: error: compile: loss dice: axis must be an integer or None, got 'x'
// NONE: kcc: error: compile: loss mean_absolute_error: reduction 'none' leaves one loss per example
// AXIS: cannot take the loss cosine_similarity(axis=2): axis 2 is out of range for a prediction of rank 2
// WEIGHTED: cannot take the loss dice(axis=0): axis 0 reduces over the batch, which leaves no value per example for the sample weights to weigh
