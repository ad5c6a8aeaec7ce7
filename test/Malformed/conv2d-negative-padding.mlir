// Malformed: conv2d with negative padding.
// ERROR-LINE: 5
// ERROR: 'padding' values must be >= 0
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  %0 = "nn.conv2d"(%x, %w) {padding = array<i64: -1, 0, 0, 0>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x5x6xf32>
  return
}
