// RUN: kcc-opt %s --split-input-file --kc-buffer-deallocation | FileCheck %s

// kc-buffer-deallocation: nothing allocated, nothing changes.
// CHECK-LABEL: func.func @arena_only(
// CHECK-NOT: dealloc
// CHECK: return
func.func @arena_only(%a: memref<64xi8>, %b: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %v = memref.view %a[%c0][] : memref<64xi8> to memref<4xf32>
  memref.copy %v, %b : memref<4xf32> to memref<4xf32>
  return
}

// -----

// Top-level allocations of a straight-line function: each freed before the
// return, in allocation order, as the deallocation pipeline does.
// CHECK-LABEL: func.func @masks(
// CHECK: %[[M0:.*]] = memref.alloc() : memref<8xi1>
// CHECK: %[[M1:.*]] = memref.alloc() : memref<8xi1>
// CHECK: memref.dealloc %[[M0]] : memref<8xi1>
// CHECK-NEXT: memref.dealloc %[[M1]] : memref<8xi1>
// CHECK-NEXT: return
func.func @masks(%a: memref<8xi1>, %b: memref<8xi1>) {
  %m0 = memref.alloc() : memref<8xi1>
  memref.copy %a, %m0 : memref<8xi1> to memref<8xi1>
  %m1 = memref.alloc() : memref<8xi1>
  memref.copy %m0, %m1 : memref<8xi1> to memref<8xi1>
  memref.copy %m1, %b : memref<8xi1> to memref<8xi1>
  return
}

// -----

// An allocation inside a loop: the ownership-based pipeline.
// CHECK-LABEL: func.func @in_loop(
// CHECK: scf.for
// CHECK: memref.alloc
// CHECK: memref.dealloc
func.func @in_loop(%a: memref<8xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %t = memref.alloc() : memref<8xf32>
    memref.copy %a, %t : memref<8xf32> to memref<8xf32>
    memref.copy %t, %a : memref<8xf32> to memref<8xf32>
  }
  return
}
