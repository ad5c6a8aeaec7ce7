func.func @add(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "nn.add"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
