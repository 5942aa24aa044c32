func.func @forward(%x: tensor<32x784xf32>, %w: tensor<100x10xf32>) -> tensor<32x10xf32> {
  %y = kc.matmul %x, %w : tensor<32x784xf32>, tensor<100x10xf32> -> tensor<32x10xf32>
  return %y : tensor<32x10xf32>
}
