// A dense layer through gelu (erf), sigmoid, exp and log, then softmax: every
// f32 math function the kernels compute themselves, on rows of 32 lanes.
func.func @forward(%w: tensor<16x32xf32> {kc.name = "dense/kernel", kc.trainable = true},
                   %x: tensor<8x16xf32> {kc.input = 0 : i64}) -> tensor<8x32xf32> {
  %0 = kc.matmul %x, %w : tensor<8x16xf32>, tensor<16x32xf32> -> tensor<8x32xf32>
  %1 = kc.gelu %0 : tensor<8x32xf32>
  %2 = kc.sigmoid %1 : tensor<8x32xf32>
  %3 = kc.exp %2 : tensor<8x32xf32>
  %4 = kc.log %3 : tensor<8x32xf32>
  %5 = kc.softmax %4 : tensor<8x32xf32>
  return %5 : tensor<8x32xf32>
}
