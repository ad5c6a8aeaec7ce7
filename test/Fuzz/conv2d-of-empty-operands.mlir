// Convolutions of operands with a 0-sized dim (lamina-fuzz's degenerate
// programs found the empty batch, which failed in convert-nn-to-linalg or
// bufferization with an out-of-bounds offset): an empty batch gives an
// empty result; no input channels is an empty reduction, whose sum is 0,
// so the result is the bias.
// RUN: lamina-run %s --random --seed 0 --check -q
func.func @main(%x: tensor<0x2x5x5xf32>, %w: tensor<3x2x3x3xf32>, %e: tensor<2x0x5x5xf32>, %we: tensor<3x0x3x3xf32>, %b: tensor<3xf32>) -> (tensor<0x3x5x5xf32>, tensor<2x3x3x3xf32>) {
  %0 = "nn.conv2d"(%x, %w) {padding = array<i64: 1, 1, 1, 1>} : (tensor<0x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<0x3x5x5xf32>
  %1 = "nn.conv2d"(%e, %we, %b) : (tensor<2x0x5x5xf32>, tensor<3x0x3x3xf32>, tensor<3xf32>) -> tensor<2x3x3x3xf32>
  return %0, %1 : tensor<0x3x5x5xf32>, tensor<2x3x3x3xf32>
}
