// Malformed: a keepdims reduction whose result drops the dim.
// ERROR-LINE: 5
// ERROR: does not match the inferred type tensor<2x1xf32>
func.func @f(%x: tensor<2x4xf32>) {
  %0 = "nn.reduce_sum"(%x) {axes = array<i64: 1>, keepdims = true} : (tensor<2x4xf32>) -> tensor<2xf32>
  return
}
