// Malformed: a reference to an attribute alias that is not defined.
// ERROR-LINE: 5
// ERROR: undefined symbol alias id 'eps'
func.func @f(%x: tensor<2x4xf32>, %g: tensor<4xf32>) {
  %0 = "nn.rms_norm"(%x, %g) {epsilon = #eps} : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return
}
