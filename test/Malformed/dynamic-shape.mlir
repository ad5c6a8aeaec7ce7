// Malformed: a tensor with a dynamic dimension.
// ERROR-LINE: 5
// ERROR: 'nn.relu' op operand #0: expected a statically shaped tensor, got tensor<?xf32>
func.func @f(%x: tensor<?xf32>) {
  %0 = "nn.relu"(%x) : (tensor<?xf32>) -> tensor<4xf32>
  return
}
