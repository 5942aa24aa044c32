// A per-step tagger written by Keras (Embedding(mask_zero=True), LSTM
// returning sequences, Dense): the training trace returns the output's mask
// (ids != 0) for kc-build-train-step, which weighs the per-step losses by it
// and divides by the number of real steps (Keras's apply_mask), then drops
// it from @forward, which returns the prediction alone.
// RUN: kcc --emit=train %kcc_src/tests/fixtures/keras/masks/mask_tagger.keras --loss=sparse_categorical_crossentropy --from-logits=true --metrics=accuracy | FileCheck %s

// CHECK-LABEL: func.func @forward
// CHECK-SAME: -> tensor<32x12x4xf32> {
// CHECK: return {{.*}} : tensor<32x12x4xf32>

// CHECK-LABEL: func.func @train_step
// CHECK: %[[REAL:.*]] = kc.compare  ne, %{{.*}}, %{{.*}} : tensor<32x12xi32> -> tensor<32x12xi1>
// CHECK: %[[MASK:.*]] = kc.cast %[[REAL]] : tensor<32x12xi1> -> tensor<32x12xf32>
// CHECK: %[[PER:.*]] = kc.neg {{.*}} : tensor<32x12xf32>
// CHECK: %[[MASKED:.*]] = kc.mul %[[PER]], %[[MASK]] : tensor<32x12xf32>
// CHECK: %[[COUNT:.*]] = kc.reduce_sum %[[MASK]] {axes = array<i64: 0, 1>}
// CHECK: %[[SUM:.*]] = kc.reduce_sum %[[MASKED]] {axes = array<i64: 0, 1>}
// CHECK: kc.div %[[SUM]], {{.*}} : tensor<f32>
