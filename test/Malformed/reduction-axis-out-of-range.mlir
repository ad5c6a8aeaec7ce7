// Malformed: a reduction over an axis the tensor does not have.
// ERROR-LINE: 5
// ERROR: 'nn.reduce_sum' op reduction axis 3 is out of range for rank 2
func.func @f(%x: tensor<2x4xf32>) {
  %0 = "nn.reduce_sum"(%x) {axes = array<i64: 3>} : (tensor<2x4xf32>) -> tensor<2xf32>
  return
}
