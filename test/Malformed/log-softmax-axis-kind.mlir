// Malformed: a log_softmax axis given as a float.
// ERROR-LINE: 5
// ERROR: 'nn.log_softmax' op attribute 'axis'
func.func @f(%x: tensor<2x4xf32>) {
  %0 = "nn.log_softmax"(%x) {axis = 1.0 : f32} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return
}
