// Malformed: an optimization level upstream asserts on.
// TOOL: lamina-opt -p builtin.module(nvvm-attach-target{O=99})
// ERROR-LINE: none
// ERROR: invalid options for pass 'nvvm-attach-target': The optimization level must be a number between 0 and 3
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}
