func.func @parallel_not_unit() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c1 step %c1 {
  } {kc.parallel = true}
  return
}
