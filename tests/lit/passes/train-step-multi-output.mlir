// RUN: kcc-opt %s --kc-build-train-step="optimizer=sgd outputs=class:sparse_categorical_crossentropy:1:0:accuracy,value:mean_squared_error:0.5:0" | FileCheck %s
// RUN: not kcc-opt %s --kc-build-train-step="optimizer=sgd" 2>&1 | FileCheck %s --check-prefix=ONE
// RUN: not kcc-opt %s --kc-build-train-step="optimizer=sgd outputs=class:sparse_categorical_crossentropy:1:0,value:mse:x:0" 2>&1 | FileCheck %s --check-prefix=BADWEIGHT

// A model with two outputs: one target per @forward result, Keras's total
// loss (each output's loss times its weight, summed), then each output's
// loss and metrics under Keras 3's log names.

func.func @forward(%w: tensor<3x2xf32> {kc.name = "class/kernel", kc.trainable = true},
                   %v: tensor<3x1xf32> {kc.name = "value/kernel", kc.trainable = true},
                   %x: tensor<4x3xf32> {kc.input = 0 : i64}) -> (tensor<4x2xf32>, tensor<4x1xf32>) {
  %y = kc.matmul %x, %w : tensor<4x3xf32>, tensor<3x2xf32> -> tensor<4x2xf32>
  %p = kc.softmax %y : tensor<4x2xf32>
  %r = kc.matmul %x, %v : tensor<4x3xf32>, tensor<3x1xf32> -> tensor<4x1xf32>
  return %p, %r : tensor<4x2xf32>, tensor<4x1xf32>
}

// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: tensor<4xi32> {kc.name = "target/class", kc.target = 0 : i64}, %{{.*}}: tensor<4x1xf32> {kc.name = "target/value", kc.target = 1 : i64})
// CHECK-SAME: {kc.name = "loss"}, tensor<f32> {kc.name = "class_loss"}, tensor<f32> {kc.name = "value_loss"}, tensor<f32> {kc.name = "class_accuracy"}
// CHECK-SAME: kc.train_step = {{.*}}metrics = ["class_loss", "value_loss", "class_accuracy"]{{.*}}targets = 2
// CHECK: %[[HALF:.*]] = kc.mul %{{.*}}, %{{.*}} : tensor<f32>
// CHECK: kc.add %{{.*}}, %[[HALF]] : tensor<f32>

// ONE: error: 'func.func' op expects one result (the prediction), got 2 (train several outputs with one loss each: the `outputs` option)

// BADWEIGHT: output 'value': loss weight 'x' is not a number
