// Malformed: a conv2d bias of the wrong length.
// ERROR-LINE: 5
// ERROR: conv2d bias must have shape [4]
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<3xf32>) {
  %0 = "nn.conv2d"(%x, %w, %b) : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<3xf32>) -> tensor<1x4x6x6xf32>
  return
}
