// Malformed: an op without the ':' before its type (the parenthesis is read as a region).
// ERROR-LINE: 5
// ERROR: expected '{' to begin a region
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "nn.relu"(%x) (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
