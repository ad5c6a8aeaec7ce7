// Malformed: a pad with a negative amount.
// ERROR-LINE: 5
// ERROR: 'low' values must be >= 0
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.pad"(%x) {low = array<i64: -1>, high = array<i64: 0>} : (tensor<4xf32>) -> tensor<3xf32>
  return
}
