// Malformed: a value defined twice.
// ERROR-LINE: 6
// ERROR: redefinition of SSA value '%0'
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %0 = "nn.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
