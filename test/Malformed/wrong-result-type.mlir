// Malformed: a result type that is not the inferred one.
// ERROR-LINE: 5
// ERROR: 'nn.add' op result type tensor<2x4xf32> does not match the inferred type tensor<2x3xf32>
func.func @f(%x: tensor<2x3xf32>) {
  %0 = "nn.add"(%x, %x) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x4xf32>
  return
}
