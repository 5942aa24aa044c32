func.func @layout(%x: tensor<2x3x4xf32>, %b: tensor<4xf32>) -> tensor<12x2xf32> {
  %c = kc.constant dense<1.0> : tensor<2x3x4xf32>
  %bb = kc.broadcast_to %b : tensor<4xf32> -> tensor<2x3x4xf32>
  %s = kc.add %x, %bb : tensor<2x3x4xf32>
  %s2 = kc.add %s, %c : tensor<2x3x4xf32>
  %t = kc.transpose %s2 {perm = array<i64: 2, 1, 0>} : tensor<2x3x4xf32> -> tensor<4x3x2xf32>
  %r = kc.reshape %t : tensor<4x3x2xf32> -> tensor<12x2xf32>
  return %r : tensor<12x2xf32>
}
func.func @concat_slice(%a: tensor<4x3xf32>, %b: tensor<4x5xf32>) -> tensor<4x3xf32> {
  %c = kc.concat %a, %b {axis = 1 : i64} : (tensor<4x3xf32>, tensor<4x5xf32>) -> tensor<4x8xf32>
  %s = kc.slice %c {start = array<i64: 0, 2>, limit = array<i64: 4, 8>, strides = array<i64: 1, 2>} : tensor<4x8xf32> -> tensor<4x3xf32>
  return %s : tensor<4x3xf32>
}
func.func @reductions(%x: tensor<32x10xf32>, %y: tensor<32xi32>) -> (tensor<32x1xf32>, tensor<10xf32>, tensor<f32>, tensor<32xi64>, tensor<32x10xf32>) {
  %0 = kc.reduce_max %x {axes = array<i64: 1>, keepdims = true} : tensor<32x10xf32> -> tensor<32x1xf32>
  %1 = kc.reduce_sum %x {axes = array<i64: 0>} : tensor<32x10xf32> -> tensor<10xf32>
  %2 = kc.reduce_mean %x {axes = array<i64: 0, 1>} : tensor<32x10xf32> -> tensor<f32>
  %3 = kc.argmax %x {axis = 1 : i64} : tensor<32x10xf32> -> tensor<32xi64>
  %4 = kc.one_hot %y : tensor<32xi32> -> tensor<32x10xf32>
  return %0, %1, %2, %3, %4 : tensor<32x1xf32>, tensor<10xf32>, tensor<f32>, tensor<32xi64>, tensor<32x10xf32>
}
