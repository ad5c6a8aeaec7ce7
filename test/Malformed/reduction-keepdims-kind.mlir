// Malformed: keepdims given as an integer.
// ERROR-LINE: 5
// ERROR: 'nn.reduce_min' op attribute 'keepdims'
func.func @f(%x: tensor<2x4xf32>) {
  %0 = "nn.reduce_min"(%x) {axes = array<i64: 1>, keepdims = 1 : i64} : (tensor<2x4xf32>) -> tensor<2x1xf32>
  return
}
