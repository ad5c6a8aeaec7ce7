// Malformed: a file that ends in the middle of a function.
// ERROR-LINE: 6
// ERROR: expected operation name in quotes
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "nn.exp"(%0) : (tensor<4xf32>) -> tensor<4xf32>