// Malformed: a pad whose high amounts do not match the rank.
// ERROR-LINE: 5
// ERROR: 'high' must have 2 elements, got 1
func.func @f(%x: tensor<2x4xf32>) {
  %0 = "nn.pad"(%x) {low = array<i64: 0, 0>, high = array<i64: 1>} : (tensor<2x4xf32>) -> tensor<3x4xf32>
  return
}
