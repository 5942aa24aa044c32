func.func @row_factor(%x: tensor<64x10xf32>, %s: tensor<64x1xf32>) -> tensor<64x10xf32> {
  %0 = kc.log %s : tensor<64x1xf32>
  %1 = kc.broadcast_to %0 : tensor<64x1xf32> -> tensor<64x10xf32>
  %2 = kc.sub %x, %1 : tensor<64x10xf32>
  return %2 : tensor<64x10xf32>
}
