// Malformed: a unary op given two operands.
// ERROR-LINE: 5
// ERROR: 'nn.relu' op expects 1 operands, got 2
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.relu"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}
