// Malformed: a reduction over one axis twice.
// ERROR-LINE: 5
// ERROR: reduction axes repeat
func.func @f(%x: tensor<2x4xf32>) {
  %0 = "nn.reduce_max"(%x) {axes = array<i64: 1, -1>} : (tensor<2x4xf32>) -> tensor<2xf32>
  return
}
