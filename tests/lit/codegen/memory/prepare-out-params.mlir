// RUN: kcc-opt %s --split-input-file --kc-prepare-out-params | FileCheck %s

// A returned argument gets a fresh allocation and a copy, which
// buffer-results-to-out-params then makes the caller's buffer; a result that
// is already its own allocation is left alone.
// CHECK-LABEL: func.func @returns_arg(
// CHECK-SAME: %[[A:.*]]: memref<4xf32>
// CHECK: %[[OWN:.*]] = memref.alloc() : memref<4xf32>
// CHECK: %[[COPY:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4xf32>
// CHECK-NEXT: linalg.copy ins(%[[A]] : memref<4xf32>) outs(%[[COPY]] : memref<4xf32>)
// CHECK-NEXT: return %[[COPY]], %[[OWN]]
func.func @returns_arg(%a: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>) {
  %own = memref.alloc() : memref<4xf32>
  return %a, %own : memref<4xf32>, memref<4xf32>
}

// -----

// One buffer returned twice: the second use gets its own copy.
// CHECK-LABEL: func.func @twice(
// CHECK: %[[B:.*]] = memref.alloc() : memref<2x3xf32>
// CHECK: %[[COPY:.*]] = memref.alloc() {alignment = 64 : i64} : memref<2x3xf32>
// CHECK-NEXT: linalg.copy ins(%[[B]] : memref<2x3xf32>) outs(%[[COPY]] : memref<2x3xf32>)
// CHECK-NEXT: return %[[B]], %[[COPY]]
func.func @twice() -> (memref<2x3xf32>, memref<2x3xf32>) {
  %b = memref.alloc() : memref<2x3xf32>
  return %b, %b : memref<2x3xf32>, memref<2x3xf32>
}

// -----

// Results that share a kc.name with an argument are the update candidates
// kc-mark-in-place checks later: flat (result, argument) pairs, recorded
// with the number of inputs.
// CHECK-LABEL: func.func @update(
// CHECK-SAME: kc.num_inputs = 2
// CHECK-SAME: kc.update_candidates = array<i64: 0, 1>
func.func @update(%g: memref<4xf32> {kc.name = "g"}, %w: memref<4xf32> {kc.name = "w"})
    -> (memref<4xf32> {kc.name = "w"}) {
  %new = memref.alloc() : memref<4xf32>
  return %new : memref<4xf32>
}
