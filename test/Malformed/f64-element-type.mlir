// Malformed: f64 tensors, which nn's reductions (accumulating in f32) do not take.
// ERROR-LINE: 5
// ERROR: 'nn.reduce_sum' op operand #0 has element type f64
func.func @f(%x: tensor<4xf64>) {
  %0 = "nn.reduce_sum"(%x) {axes = array<i64: 0>} : (tensor<4xf64>) -> tensor<f64>
  return
}
