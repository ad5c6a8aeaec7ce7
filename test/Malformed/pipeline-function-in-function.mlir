// Malformed: a function pipeline nested in a function pipeline.
// TOOL: lamina-opt -p builtin.module(func.func(func.func(cse)))
// ERROR-LINE: none
// ERROR: 'func.func' cannot be nested in 'func.func'
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}
