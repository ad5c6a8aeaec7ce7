// Malformed: a transpose without its permutation.
// ERROR-LINE: 5
// ERROR: 'nn.transpose' op requires attribute 'perm'
func.func @f(%x: tensor<2x3xf32>) {
  %0 = "nn.transpose"(%x) : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return
}
