// Malformed: a use of a value that is never defined.
// ERROR-LINE: 6
// ERROR: use of undeclared SSA value name
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "nn.add"(%0, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
