func.func @momentum(%p: tensor<64x32xf32>, %m: tensor<64x32xf32>, %g: tensor<64x32xf32>)
    -> (tensor<64x32xf32>, tensor<64x32xf32>) {
  %0 = kc.mul %m, %m : tensor<64x32xf32>
  %1 = kc.add %0, %g : tensor<64x32xf32>
  %2 = kc.sub %p, %1 : tensor<64x32xf32>
  return %2, %1 : tensor<64x32xf32>, tensor<64x32xf32>
}
