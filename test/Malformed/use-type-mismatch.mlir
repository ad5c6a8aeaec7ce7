// Malformed: an operand whose stated type differs from its value's type.
// ERROR-LINE: 5
// ERROR: use of value '%x' expects different type than prior uses
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.relu"(%x) : (tensor<8xf32>) -> tensor<8xf32>
  return
}
