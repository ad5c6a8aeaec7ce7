// Malformed: a scalar where a tensor is needed.
// ERROR-LINE: 5
// ERROR: 'nn.neg' op operand #0: expected a ranked tensor, got f32
func.func @f(%x: f32) {
  %0 = "nn.neg"(%x) : (f32) -> tensor<f32>
  return
}
