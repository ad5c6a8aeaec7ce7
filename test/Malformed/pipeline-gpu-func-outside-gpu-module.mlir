// Malformed: a gpu.func pipeline outside any gpu.module.
// TOOL: lamina-opt -p builtin.module(gpu.func(cse))
// ERROR-LINE: none
// ERROR: 'gpu.func' must be nested in 'gpu.module'
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}
