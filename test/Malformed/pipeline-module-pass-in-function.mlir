// Malformed: a module pass nested in a function pipeline.
// TOOL: lamina-opt -p builtin.module(func.func(one-shot-bufferize))
// ERROR-LINE: none
// ERROR: pass 'one-shot-bufferize' cannot be nested in 'func.func'
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}
