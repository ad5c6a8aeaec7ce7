// Malformed: a module pipeline nested in a function pipeline.
// TOOL: lamina-opt -p builtin.module(func.func(builtin.module(canonicalize)))
// ERROR-LINE: none
// ERROR: 'builtin.module' cannot be nested in 'func.func'
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}
