// Malformed: a bad op in the second of two functions, further down the file.
// ERROR-LINE: 12
// ERROR: 'nn.reshape' op reshape changes the element count: tensor<4xf32> has 4, tensor<5xf32> has 5
func.func @good(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "nn.exp"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

func.func @bad(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "nn.reshape"(%0) : (tensor<4xf32>) -> tensor<5xf32>
  return %0 : tensor<4xf32>
}
