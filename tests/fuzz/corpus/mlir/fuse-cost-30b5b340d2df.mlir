func.func @scalar_factor(%p: tensor<256x128xf32>, %g: tensor<256x128xf32>,
                         %beta: tensor<f32>, %t: tensor<f32>) -> tensor<256x128xf32> {
  %0 = kc.pow %beta, %t : tensor<f32>
  %1 = kc.sqrt %0 : tensor<f32>
  %2 = kc.broadcast_to %1 : tensor<f32> -> tensor<256x128xf32>
  %3 = kc.mul %2, %g : tensor<256x128xf32>
  %4 = kc.sub %p, %3 : tensor<256x128xf32>
  return %4 : tensor<256x128xf32>
}
