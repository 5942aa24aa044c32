// RUN: kcc-opt %s --pass-pipeline='builtin.module(func.func(kc-mark-cold-functions{work=1000}))' | FileCheck %s
// RUN: kcc-opt %s --pass-pipeline='builtin.module(func.func(kc-mark-cold-functions))' | FileCheck %s --check-prefix=OFF

// Work per call: each op once per iteration of the static loops around it
// (terminators included).
// @small: 5 + 16 * 3 = 53 < 1000, cold.
// @big: 6 + 64 * 2 + 64 * 16 * 4 = 4230 >= 1000, hot.
// @calls: straight-line calls, 3 ops, cold.
// @dynamic: a loop of unknown trip count, hot.
// CHECK-LABEL: func.func @small(
// CHECK-SAME: attributes {kc.cold}
// CHECK-LABEL: func.func @big(
// CHECK-NOT: kc.cold
// CHECK-LABEL: func.func @calls(
// CHECK-SAME: attributes {kc.cold}
// CHECK-LABEL: func.func @dynamic(
// CHECK-NOT: kc.cold
// OFF-NOT: kc.cold
func.func @small(%a: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c16 step %c1 {
    %v = memref.load %a[%i] : memref<16xf32>
    memref.store %v, %a[%i] : memref<16xf32>
  }
  return
}

func.func @big(%a: memref<64x16xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c64 step %c1 {
    scf.for %j = %c0 to %c16 step %c1 {
      %v = memref.load %a[%i, %j] : memref<64x16xf32>
      %w = arith.addf %v, %v : f32
      memref.store %w, %a[%i, %j] : memref<64x16xf32>
    }
  }
  return
}

func.func @calls(%a: memref<16xf32>) {
  call @small(%a) : (memref<16xf32>) -> ()
  call @small(%a) : (memref<16xf32>) -> ()
  return
}

func.func @dynamic(%a: memref<16xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %a[%c0] : memref<16xf32>
    memref.store %v, %a[%c0] : memref<16xf32>
  }
  return
}
