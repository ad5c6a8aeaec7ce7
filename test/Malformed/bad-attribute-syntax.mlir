// Malformed: an attribute dictionary entry without a value.
// ERROR-LINE: 5
// ERROR: expected attribute value
func.func @f(%x: tensor<2x4xf32>) {
  %0 = "nn.softmax"(%x) {axis = } : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return
}
