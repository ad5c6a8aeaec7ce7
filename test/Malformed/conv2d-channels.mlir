// Malformed: a convolution whose weight expects other input channels.
// ERROR-LINE: 5
// ERROR: 'nn.conv2d' op conv2d input channels differ: input has 3, weight expects 4 x 1 groups
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<2x4x3x3xf32>) {
  %0 = "nn.conv2d"(%x, %w) : (tensor<1x3x8x8xf32>, tensor<2x4x3x3xf32>) -> tensor<1x2x6x6xf32>
  return
}
