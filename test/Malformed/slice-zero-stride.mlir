// Malformed: a slice with a zero stride.
// ERROR-LINE: 5
// ERROR: slice stride in dim 0 must be >= 1
func.func @f(%x: tensor<8xf32>) {
  %0 = "nn.slice"(%x) {starts = array<i64: 0>, limits = array<i64: 8>, strides = array<i64: 0>} : (tensor<8xf32>) -> tensor<8xf32>
  return
}
