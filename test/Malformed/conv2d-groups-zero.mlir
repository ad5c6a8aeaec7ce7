// Malformed: conv2d with zero groups.
// ERROR-LINE: 5
// ERROR: 'groups' must be >= 1
func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  %0 = "nn.conv2d"(%x, %w) {groups = 0 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}
