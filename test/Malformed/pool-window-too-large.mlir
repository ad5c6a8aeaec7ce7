// Malformed: an average pooling window larger than its input.
// ERROR-LINE: 5
// ERROR: pooling window 3x3 does not fit
func.func @f(%x: tensor<1x3x2x2xf32>) {
  %0 = "nn.avg_pool2d"(%x) {kernel = array<i64: 3, 3>} : (tensor<1x3x2x2xf32>) -> tensor<1x3x1x1xf32>
  return
}
