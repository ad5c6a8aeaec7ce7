// Malformed: a conv2d of a rank-3 input.
// ERROR-LINE: 5
// ERROR: conv2d input must be NCHW
func.func @f(%x: tensor<3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  %0 = "nn.conv2d"(%x, %w) : (tensor<3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}
