// Malformed: a pad value given as a string.
// ERROR-LINE: 5
// ERROR: 'nn.pad' op attribute 'value'
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.pad"(%x) {low = array<i64: 1>, high = array<i64: 1>, value = "zero"} : (tensor<4xf32>) -> tensor<6xf32>
  return
}
