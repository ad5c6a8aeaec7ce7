// Malformed: a layer_norm whose scale has the wrong shape.
// ERROR-LINE: 5
// ERROR: gamma must have shape [8]
func.func @f(%x: tensor<2x8xf32>, %g: tensor<4xf32>, %b: tensor<8xf32>) {
  %0 = "nn.layer_norm"(%x, %g, %b) : (tensor<2x8xf32>, tensor<4xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return
}
