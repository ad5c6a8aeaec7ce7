// Max and average pooling, NCHW and NHWC, f32, f16 and bf16: strides,
// padding on some sides, windows no size divides, a global pooling of a
// 7x7 map (49 taps).
func.func @main(%x: tensor<2x3x11x9xf32>, %h: tensor<1x10x7x5xf16>, %b: tensor<2x4x6x6xbf16>, %g: tensor<3x8x7x7xf32>)
    -> (tensor<2x3x6x4xf32>, tensor<1x5x7x5xf16>, tensor<2x4x3x3xbf16>, tensor<3x8x1x1xf32>, tensor<2x3x4x3xf32>, tensor<1x4x7x5xf16>) {
  %0 = "nn.max_pool2d"(%x) {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 0>} : (tensor<2x3x11x9xf32>) -> tensor<2x3x6x4xf32>
  %1 = "nn.max_pool2d"(%h) {kernel = array<i64: 2, 1>, strides = array<i64: 2, 1>, layout = "NHWC"} : (tensor<1x10x7x5xf16>) -> tensor<1x5x7x5xf16>
  %2 = "nn.avg_pool2d"(%b) {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<2x4x6x6xbf16>) -> tensor<2x4x3x3xbf16>
  %3 = "nn.avg_pool2d"(%g) {kernel = array<i64: 7, 7>} : (tensor<3x8x7x7xf32>) -> tensor<3x8x1x1xf32>
  %4 = "nn.avg_pool2d"(%x) {kernel = array<i64: 3, 3>, strides = array<i64: 3, 3>, padding = array<i64: 1, 0, 0, 1>} : (tensor<2x3x11x9xf32>) -> tensor<2x3x4x3xf32>
  %5 = "nn.avg_pool2d"(%h) {kernel = array<i64: 3, 3>, strides = array<i64: 3, 1>, padding = array<i64: 1, 1, 1, 1>, layout = "NHWC"} : (tensor<1x10x7x5xf16>) -> tensor<1x4x7x5xf16>
  return %0, %1, %2, %3, %4, %5 : tensor<2x3x6x4xf32>, tensor<1x5x7x5xf16>, tensor<2x4x3x3xbf16>, tensor<3x8x1x1xf32>, tensor<2x3x4x3xf32>, tensor<1x4x7x5xf16>
}
