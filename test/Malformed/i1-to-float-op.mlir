// Malformed: an i1 tensor given to relu.
// ERROR-LINE: 5
// ERROR: 'nn.relu' op operand #0 has element type i1
func.func @f(%x: tensor<4xi1>) {
  %0 = "nn.relu"(%x) : (tensor<4xi1>) -> tensor<4xi1>
  return
}
