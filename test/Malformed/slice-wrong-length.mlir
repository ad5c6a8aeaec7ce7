// Malformed: a slice whose starts do not match the rank.
// ERROR-LINE: 5
// ERROR: 'starts' must have 2 elements
func.func @f(%x: tensor<2x8xf32>) {
  %0 = "nn.slice"(%x) {starts = array<i64: 0>, limits = array<i64: 2, 8>} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return
}
