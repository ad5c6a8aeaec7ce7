// Malformed: a max pooling without its kernel.
// ERROR-LINE: 5
// ERROR: 'nn.max_pool2d' op requires attribute 'kernel'
func.func @f(%x: tensor<1x3x8x8xf32>) {
  %0 = "nn.max_pool2d"(%x) : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  return
}
