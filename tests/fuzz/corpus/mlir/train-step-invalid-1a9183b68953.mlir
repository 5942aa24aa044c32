module {
  func.func @predict(%x: tensor<4x3xf32> {kc.input = 0 : i64}) -> tensor<4x3xf32> {
    return %x : tensor<4x3xf32>
  }
}
