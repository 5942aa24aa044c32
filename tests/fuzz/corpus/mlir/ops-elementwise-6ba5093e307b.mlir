func.func @binary(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = kc.add %a, %b : tensor<4x3xf32>
  %1 = kc.sub %0, %b : tensor<4x3xf32>
  %2 = kc.mul %1, %b : tensor<4x3xf32>
  %3 = kc.div %2, %b : tensor<4x3xf32>
  %4 = kc.pow %3, %b : tensor<4x3xf32>
  %5 = kc.max %4, %b : tensor<4x3xf32>
  %6 = kc.min %5, %b : tensor<4x3xf32>
  return %6 : tensor<4x3xf32>
}
func.func @unary(%x: tensor<8xf64>) -> tensor<8xf64> {
  %0 = kc.neg %x : tensor<8xf64>
  %1 = kc.exp %0 : tensor<8xf64>
  %2 = kc.log %1 : tensor<8xf64>
  %3 = kc.sqrt %2 : tensor<8xf64>
  %4 = kc.rsqrt %3 : tensor<8xf64>
  %5 = kc.abs %4 : tensor<8xf64>
  %6 = kc.relu %5 : tensor<8xf64>
  %7 = kc.sigmoid %6 : tensor<8xf64>
  %8 = kc.tanh %7 : tensor<8xf64>
  %9 = kc.gelu %8 : tensor<8xf64>
  %10 = kc.gelu %9 {approximate = true} : tensor<8xf64>
  return %10 : tensor<8xf64>
}
func.func @half_types(%x: tensor<8xbf16>, %y: tensor<8xf16>) -> (tensor<8xbf16>, tensor<8xf16>) {
  %0 = kc.relu %x : tensor<8xbf16>
  %1 = kc.exp %y : tensor<8xf16>
  return %0, %1 : tensor<8xbf16>, tensor<8xf16>
}
func.func @compare_select_cast(%a: tensor<4xf32>, %b: tensor<4xf32>, %i: tensor<4xi64>) -> (tensor<4xf32>, tensor<4xf32>) {
  %m = kc.compare gt, %a, %b : tensor<4xf32> -> tensor<4xi1>
  %s = kc.select %m, %a, %b : tensor<4xi1>, tensor<4xf32>
  %c = kc.cast %i : tensor<4xi64> -> tensor<4xf32>
  return %s, %c : tensor<4xf32>, tensor<4xf32>
}
