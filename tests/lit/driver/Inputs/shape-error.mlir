// A Dense layer whose weight does not match its input: a shape error.
func.func @forward(%x: tensor<32x784xf32>, %w: tensor<100x10xf32>) -> tensor<32x10xf32> {
  // The error points here.
  %y = kc.matmul %x, %w : tensor<32x784xf32>, tensor<100x10xf32> -> tensor<32x10xf32>
  return %y : tensor<32x10xf32>
}
