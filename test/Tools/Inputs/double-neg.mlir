func.func @double_neg(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "nn.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "nn.neg"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

func.func @single_neg(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "nn.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
