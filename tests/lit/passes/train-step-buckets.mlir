// RUN: kcc-opt %s --kc-build-train-step="loss=sparse_categorical_crossentropy optimizer=sgd data-parallel=true bucket-bytes=64" | FileCheck %s
// RUN: kcc-opt %s --kc-build-train-step="loss=sparse_categorical_crossentropy optimizer=sgd data-parallel=true" | FileCheck %s --check-prefix=ONE

// Data-parallel gradients travel in buckets, in the order the backward
// produces them. With 64-byte buckets the second layer's kernel (40 bytes)
// and bias (8 bytes) share one, whose all-reduce starts before the backward
// reaches the first layer's kernel; the first layer's 20-byte bias and
// 60-byte kernel overflow into buckets of their own, the bias's started
// before the kernel's gradient is computed. The waits come after the whole
// backward, before the optimizer. With the default (1 MiB) all four
// gradients are one bucket, started after the last of them.

func.func @forward(%w1: tensor<3x5xf32> {kc.name = "d1/kernel", kc.trainable = true},
                   %b1: tensor<5xf32> {kc.name = "d1/bias", kc.trainable = true},
                   %w2: tensor<5x2xf32> {kc.name = "d2/kernel", kc.trainable = true},
                   %b2: tensor<2xf32> {kc.name = "d2/bias", kc.trainable = true},
                   %x: tensor<4x3xf32> {kc.input = 0 : i64}) -> tensor<4x2xf32> {
  %y1 = kc.matmul %x, %w1 : tensor<4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
  %c1 = kc.broadcast_to %b1 : tensor<5xf32> -> tensor<4x5xf32>
  %z1 = kc.add %y1, %c1 : tensor<4x5xf32>
  %h = kc.relu %z1 : tensor<4x5xf32>
  %y2 = kc.matmul %h, %w2 : tensor<4x5xf32>, tensor<5x2xf32> -> tensor<4x2xf32>
  %c2 = kc.broadcast_to %b2 : tensor<2xf32> -> tensor<4x2xf32>
  %z2 = kc.add %y2, %c2 : tensor<4x2xf32>
  %p = kc.softmax %z2 : tensor<4x2xf32>
  return %p : tensor<4x2xf32>
}

// CHECK-LABEL: func.func @train_step
// CHECK: kc.all_reduce_start "mean" %{{.*}} : tensor<12xf32>
// CHECK: kc.all_reduce_start "mean" %{{.*}} : tensor<5xf32>
// CHECK: kc.matmul %{{.*}}, %{{.*}} {transpose_lhs = true} : tensor<4x3xf32>, tensor<4x5xf32> -> tensor<3x5xf32>
// CHECK: kc.all_reduce_start "mean" %{{.*}} : tensor<15xf32>
// CHECK-NOT: kc.matmul
// CHECK: kc.all_reduce_wait "mean" %{{.*}} : tensor<12xf32>
// CHECK: kc.all_reduce_wait "mean" %{{.*}} : tensor<5xf32>
// CHECK: kc.all_reduce_wait "mean" %{{.*}} : tensor<15xf32>
// CHECK-NOT: kc.all_reduce
// CHECK: return

// ONE-LABEL: func.func @train_step
// ONE: kc.matmul %{{.*}}, %{{.*}} {transpose_lhs = true} : tensor<4x3xf32>, tensor<4x5xf32> -> tensor<3x5xf32>
// ONE: %[[P:.*]] = kc.concat {{.*}} -> tensor<32xf32>
// ONE: %[[S:.*]] = kc.all_reduce_start "mean" %[[P]] : tensor<32xf32>
// ONE-NOT: kc.matmul
// ONE: %[[R:.*]] = kc.all_reduce_wait "mean" %[[S]] : tensor<32xf32>
// ONE-COUNT-4: kc.slice %[[R]]
// ONE-NOT: kc.all_reduce
// ONE: return
