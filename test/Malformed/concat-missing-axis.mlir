// Malformed: a concat without its axis.
// ERROR-LINE: 5
// ERROR: 'nn.concat' op requires attribute 'axis'
func.func @f(%a: tensor<2x3xf32>) {
  %0 = "nn.concat"(%a, %a) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return
}
