// Malformed: a value used before the op that defines it.
// ERROR-LINE: 5
// ERROR: operand #0 does not dominate this use
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.exp"(%1) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}
