func.func @layout(%x: tensor<4x6xf32>) -> (tensor<6x4xf32>, tensor<4x2xf32>, tensor<4x12xf32>) {
  %t = kc.transpose %x {perm = array<i64: 1, 0>} : tensor<4x6xf32> -> tensor<6x4xf32>
  %s = kc.slice %x {start = array<i64: 0, 1>, limit = array<i64: 4, 5>, strides = array<i64: 1, 2>} : tensor<4x6xf32> -> tensor<4x2xf32>
  %c = kc.concat %x, %x {axis = 1 : i64} : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x12xf32>
  return %t, %s, %c : tensor<6x4xf32>, tensor<4x2xf32>, tensor<4x12xf32>
}
