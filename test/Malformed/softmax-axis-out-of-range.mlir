// Malformed: a softmax over an axis the tensor does not have.
// ERROR-LINE: 5
// ERROR: axis 2 is out of range for rank 2
func.func @f(%x: tensor<2x4xf32>) {
  %0 = "nn.softmax"(%x) {axis = 2 : i64} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return
}
