// Malformed: a string attribute that never ends.
// ERROR-LINE: 5
// ERROR: expected '"' in string literal
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.gelu"(%x) {approximate = "tanh} : (tensor<4xf32>) -> tensor<4xf32>
  return
}
