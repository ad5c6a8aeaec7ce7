// Malformed: an axis given as a string.
// ERROR-LINE: 5
// ERROR: 'nn.softmax' op attribute 'axis' must be a 64-bit integer, got "last"
func.func @f(%x: tensor<2x4xf32>) {
  %0 = "nn.softmax"(%x) {axis = "last"} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return
}
