// Malformed: a gelu approximation given as an integer.
// ERROR-LINE: 5
// ERROR: 'nn.gelu' op attribute 'approximate'
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.gelu"(%x) {approximate = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return
}
