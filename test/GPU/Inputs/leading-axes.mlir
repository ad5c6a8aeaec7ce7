// Reductions and row groups over leading axes (rows walked in place, strided):
// a column maximum, a mean over all but the channels, softmax and
// log_softmax over axes that are not the last.
func.func @main(%x: tensor<8x6xf32>, %y: tensor<2x5x3x7xf16>, %z: tensor<5x1x9xbf16>) -> (tensor<6xf32>, tensor<1x5x1x1xf16>, tensor<2x5x3x7xf16>, tensor<5x1x9xbf16>) {
  %0 = "nn.reduce_max"(%x) {axes = array<i64: 0>} : (tensor<8x6xf32>) -> tensor<6xf32>
  %1 = "nn.reduce_mean"(%y) {axes = array<i64: 0, 2, 3>, keepdims = true} : (tensor<2x5x3x7xf16>) -> tensor<1x5x1x1xf16>
  %2 = "nn.softmax"(%y) {axis = 1 : i64} : (tensor<2x5x3x7xf16>) -> tensor<2x5x3x7xf16>
  %3 = "nn.log_softmax"(%z) {axis = 0 : i64} : (tensor<5x1x9xbf16>) -> tensor<5x1x9xbf16>
  return %0, %1, %2, %3 : tensor<6xf32>, tensor<1x5x1x1xf16>, tensor<2x5x3x7xf16>, tensor<5x1x9xbf16>
}
