func.func @main(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %0 = "nn.hard_sigmoid"(%x) : (tensor<2x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}
