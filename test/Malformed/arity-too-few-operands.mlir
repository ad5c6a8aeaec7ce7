// Malformed: a binary op given one operand.
// ERROR-LINE: 5
// ERROR: 'nn.mul' op expects 2 operands, got 1
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.mul"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}
