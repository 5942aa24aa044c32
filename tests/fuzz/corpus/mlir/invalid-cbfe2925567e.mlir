func.func @slice_bounds(%a: tensor<4x8xf32>) {
  %0 = kc.slice %a {start = array<i64: 0, 2>, limit = array<i64: 4, 9>, strides = array<i64: 1, 1>} : tensor<4x8xf32> -> tensor<4x7xf32>
  return
}
