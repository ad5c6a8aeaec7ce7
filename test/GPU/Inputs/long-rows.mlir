// Rows too long for a block's registers, walked in chunks: a softmax over a
// vocabulary of 50257 (f16), a layer_norm and a maximum over 20000 (f32).
func.func @main(%x: tensor<2x50257xf16>, %y: tensor<3x20000xf32>, %g: tensor<20000xf32>, %b: tensor<20000xf32>) -> (tensor<2x50257xf16>, tensor<3x20000xf32>, tensor<3xf32>) {
  %0 = "nn.softmax"(%x) {axis = -1 : i64} : (tensor<2x50257xf16>) -> tensor<2x50257xf16>
  %1 = "nn.layer_norm"(%y, %g, %b) {axis = -1 : i64, epsilon = 1.0e-5 : f64} : (tensor<3x20000xf32>, tensor<20000xf32>, tensor<20000xf32>) -> tensor<3x20000xf32>
  %2 = "nn.reduce_max"(%y) {axes = array<i64: 1>} : (tensor<3x20000xf32>) -> tensor<3xf32>
  return %0, %1, %2 : tensor<2x50257xf16>, tensor<3x20000xf32>, tensor<3xf32>
}
