// Malformed: a pooling kernel given as a dense attribute.
// ERROR-LINE: 5
// ERROR: 'nn.max_pool2d' op attribute 'kernel'
func.func @f(%x: tensor<1x3x8x8xf32>) {
  %0 = "nn.max_pool2d"(%x) {kernel = dense<2> : tensor<2xi64>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x7x7xf32>
  return
}
