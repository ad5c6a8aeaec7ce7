// Malformed: a slice past the end of its operand.
// ERROR-LINE: 5
// ERROR: 'nn.slice' op slice bounds in dim 0 must satisfy 0 <= start <= limit <= 4, got start 0, limit 5
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.slice"(%x) {starts = array<i64: 0>, limits = array<i64: 5>} : (tensor<4xf32>) -> tensor<5xf32>
  return
}
