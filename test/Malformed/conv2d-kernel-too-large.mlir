// Malformed: a conv2d kernel larger than its input.
// ERROR-LINE: 5
// ERROR: does not fit the padded input
func.func @f(%x: tensor<1x3x2x2xf32>, %w: tensor<4x3x3x3xf32>) {
  %0 = "nn.conv2d"(%x, %w) : (tensor<1x3x2x2xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x1x1xf32>
  return
}
