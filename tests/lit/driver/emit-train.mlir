// RUN: kcc --emit=train --metrics=accuracy %S/Inputs/dense.mlir | FileCheck %s
// RUN: kcc --emit=train --optimizer=sgd %S/Inputs/dense.mlir | FileCheck %s --check-prefix=SGD
// RUN: kcc --emit=train --model=cnn --batch 4 | FileCheck %s --check-prefix=CNN

// @train_step after kc-build-train-step; @forward stays for inference.
// CHECK-LABEL: func.func @forward
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: {kc.name = "adam/momentum/dense/kernel"}
// CHECK-SAME: {kc.name = "learning_rate"}
// CHECK-SAME: -> (tensor<f32> {kc.name = "loss"}, tensor<f32> {kc.name = "accuracy"}
// CHECK-SAME: kc.train_step = {{{.*}}metrics = ["accuracy"], optimizer = "adam"

// SGD-LABEL: func.func @train_step
// SGD-SAME: optimizer = "sgd"

// The reference CNN ends in logits: kcc knows, so the loss is from logits.
// CNN-LABEL: func.func @train_step
// CNN-SAME: from_logits = true
// CNN: kc.conv2d
