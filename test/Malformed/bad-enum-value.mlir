// Malformed: a gelu approximation that does not exist.
// ERROR-LINE: 5
// ERROR: 'nn.gelu' op attribute 'approximate': "fast" is not one of "none", "tanh"
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.gelu"(%x) {approximate = "fast"} : (tensor<4xf32>) -> tensor<4xf32>
  return
}
