// Malformed: a pooling of a rank-2 input.
// ERROR-LINE: 5
// ERROR: pooling input must be NCHW
func.func @f(%x: tensor<8x8xf32>) {
  %0 = "nn.max_pool2d"(%x) {kernel = array<i64: 2, 2>} : (tensor<8x8xf32>) -> tensor<4x4xf32>
  return
}
