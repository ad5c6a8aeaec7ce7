// Malformed: a pow whose result has the wrong broadcast shape.
// ERROR-LINE: 5
// ERROR: does not match the inferred type tensor<2x3xf32>
func.func @f(%x: tensor<2x1xf32>, %y: tensor<3xf32>) {
  %0 = "nn.pow"(%x, %y) : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x1xf32>
  return
}
