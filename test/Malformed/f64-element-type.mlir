// Malformed: f64 tensors, which nn's float ops do not take.
// ERROR-LINE: 5
// ERROR: 'nn.tanh' op operand #0 has element type f64
func.func @f(%x: tensor<4xf64>) {
  %0 = "nn.tanh"(%x) : (tensor<4xf64>) -> tensor<4xf64>
  return
}
