// Malformed: operands that do not broadcast.
// ERROR-LINE: 5
// ERROR: 'nn.sub' op operands are not broadcast-compatible: 2x3 vs 2
func.func @f(%x: tensor<2x3xf32>, %y: tensor<2xf32>) {
  %0 = "nn.sub"(%x, %y) : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  return
}
