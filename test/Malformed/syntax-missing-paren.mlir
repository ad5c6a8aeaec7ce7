// Malformed: an operand list without its closing parenthesis.
// ERROR-LINE: 5
// ERROR: expected ')' to end operand list
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "nn.relu"(%x : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
