// Malformed: options given to an anchor.
// TOOL: lamina-opt -p builtin.module(func.func{x=1}(cse))
// ERROR-LINE: none
// ERROR: anchor 'func.func' cannot take options
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}
