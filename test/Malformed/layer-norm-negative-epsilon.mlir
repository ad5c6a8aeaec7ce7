// Malformed: a layer_norm with a negative epsilon.
// ERROR-LINE: 5
// ERROR: 'epsilon' must be >= 0
func.func @f(%x: tensor<2x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) {
  %0 = "nn.layer_norm"(%x, %g, %b) {epsilon = -1.0 : f32} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return
}
