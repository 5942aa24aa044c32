// RUN: kcc-opt %s --kc-outline-kernels | FileCheck %s

// Ten kernels: runs of at most 8 go into private, internal, never-inlined
// functions; the constants they use are cloned in, the buffers passed.
// CHECK-LABEL: func.func @step(
// CHECK: call @step_kernel_0(%arg0, %arg1) : (memref<16xf32>, memref<16xf32>) -> ()
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: call @step_kernel_1(%arg0, %arg1)
// CHECK-NEXT: return
func.func @step(%a: memref<16xf32>, %b: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %one = arith.constant 1.0 : f32
  %t = memref.alloc() : memref<4xf32>
  scf.for %i = %c0 to %c16 step %c1 {
    %v = memref.load %a[%i] : memref<16xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %b[%i] : memref<16xf32>
  }
  scf.for %i = %c0 to %c16 step %c1 {
    %v = memref.load %a[%i] : memref<16xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %b[%i] : memref<16xf32>
  }
  scf.for %i = %c0 to %c16 step %c1 {
    %v = memref.load %a[%i] : memref<16xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %b[%i] : memref<16xf32>
  }
  scf.for %i = %c0 to %c16 step %c1 {
    %v = memref.load %a[%i] : memref<16xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %b[%i] : memref<16xf32>
  }
  scf.for %i = %c0 to %c16 step %c1 {
    %v = memref.load %a[%i] : memref<16xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %b[%i] : memref<16xf32>
  }
  scf.for %i = %c0 to %c16 step %c1 {
    %v = memref.load %a[%i] : memref<16xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %b[%i] : memref<16xf32>
  }
  scf.for %i = %c0 to %c16 step %c1 {
    %v = memref.load %a[%i] : memref<16xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %b[%i] : memref<16xf32>
  }
  memref.dealloc %t : memref<4xf32>
  scf.for %i = %c0 to %c16 step %c1 {
    %v = memref.load %a[%i] : memref<16xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %b[%i] : memref<16xf32>
  }
  scf.for %i = %c0 to %c16 step %c1 {
    %v = memref.load %a[%i] : memref<16xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %b[%i] : memref<16xf32>
  }
  scf.for %i = %c0 to %c16 step %c1 {
    %v = memref.load %a[%i] : memref<16xf32>
    %w = arith.addf %v, %one : f32
    memref.store %w, %b[%i] : memref<16xf32>
  }
  return
}

// Eight kernels or fewer: the function stays as it is.
// CHECK-LABEL: func.func @small(
// CHECK-NOT: call
// CHECK: scf.for
func.func @small(%a: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c16 step %c1 {
    memref.store %one, %a[%i] : memref<16xf32>
  }
  return
}

// The outlined functions, at the end of the module.
// CHECK-LABEL: func.func private @step_kernel_0(%{{.*}}: memref<16xf32>, %{{.*}}: memref<16xf32>) attributes {llvm.linkage = #llvm.linkage<internal>, no_inline}
// CHECK-COUNT-7: scf.for
// CHECK-LABEL: func.func private @step_kernel_1(
// CHECK-COUNT-3: scf.for
