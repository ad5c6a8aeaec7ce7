// Malformed: a return whose type differs from the function's result type.
// ERROR-LINE: 6
// ERROR: type of return operand 0 ('tensor<4xf32>') doesn't match function result type ('tensor<5xf32>')
func.func @f(%x: tensor<4xf32>) -> tensor<5xf32> {
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
