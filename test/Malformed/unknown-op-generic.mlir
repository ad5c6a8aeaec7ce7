// Malformed: an nn op that does not exist, in generic form.
// ERROR-LINE: 5
// ERROR: unregistered operation 'nn.foo' found in dialect ('nn')
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "nn.foo"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
