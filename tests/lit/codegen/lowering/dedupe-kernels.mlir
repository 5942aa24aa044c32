// RUN: kcc-opt %s --kc-outline-kernels="kernels-per-function=1 pass-placements=true" --kc-dedupe-kernels | FileCheck %s

// Two kernels do the same work on two views of the arena (offsets 0 and
// 64), a third adds 2 instead of 1: with the views passed as arguments the
// first two are one function, called twice; the third, called once, goes
// back where it was.
// CHECK-LABEL: func.func @step(
// CHECK: %[[V0:.*]] = memref.view %arg1[%c0]
// CHECK: %[[V1:.*]] = memref.view %arg1[%c64]
// CHECK: call @step_kernel_0(%arg0, %[[V0]])
// CHECK-NEXT: call @step_kernel_0(%arg0, %[[V1]])
// CHECK-NOT: call
// CHECK: scf.for
// CHECK: memref.store %{{.*}}, %[[V1]]
// CHECK: return
func.func @step(%a: memref<16xf32>, %arena: memref<128xi8>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %v0 = memref.view %arena[%c0][] : memref<128xi8> to memref<16xf32>
  %v1 = memref.view %arena[%c64][] : memref<128xi8> to memref<16xf32>
  scf.for %i = %c0 to %c16 step %c1 {
    %v = memref.load %a[%i] : memref<16xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %v0[%i] : memref<16xf32>
  }
  scf.for %i = %c0 to %c16 step %c1 {
    %v = memref.load %a[%i] : memref<16xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %v1[%i] : memref<16xf32>
  }
  scf.for %i = %c0 to %c16 step %c1 {
    %v = memref.load %a[%i] : memref<16xf32>
    %w = arith.addf %v, %two : f32
    memref.store %w, %v1[%i] : memref<16xf32>
  }
  return
}

// One kernel function is left.
// CHECK-LABEL: func.func private @step_kernel_0(%{{.*}}: memref<16xf32>, %{{.*}}: memref<16xf32>)
// CHECK-NOT: func.func private
