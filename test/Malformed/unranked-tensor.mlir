// Malformed: an unranked tensor.
// ERROR-LINE: 5
// ERROR: 'nn.relu' op result: expected a ranked tensor, got tensor<*xf32>
func.func @f(%x: tensor<*xf32>) {
  %0 = "nn.relu"(%x) : (tensor<*xf32>) -> tensor<*xf32>
  return
}
