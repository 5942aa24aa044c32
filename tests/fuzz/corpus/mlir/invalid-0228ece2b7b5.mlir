func.func @slice_entries(%a: tensor<4x8xf32>) {
  %0 = kc.slice %a {start = array<i64: 0>, limit = array<i64: 4>, strides = array<i64: 1>} : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}
