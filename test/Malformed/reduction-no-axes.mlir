// Malformed: a reduction over no axes.
// ERROR-LINE: 5
// ERROR: reduction needs at least one axis
func.func @f(%x: tensor<2x4xf32>) {
  %0 = "nn.reduce_mean"(%x) {axes = array<i64>} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return
}
