// Malformed: an attribute dictionary that is never closed.
// ERROR-LINE: 5
// ERROR: expected '}' in attribute dictionary
func.func @f(%x: tensor<2x4xf32>) {
  %0 = "nn.softmax"(%x) {axis = 1 : i64 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return
}
