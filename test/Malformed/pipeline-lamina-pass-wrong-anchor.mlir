// Malformed: a Lamina function pass nested in llvm.func.
// TOOL: lamina-opt -p builtin.module(llvm.func(nn-canonicalize))
// ERROR-LINE: none
// ERROR: pass 'nn-canonicalize' runs on 'func.func' and cannot be nested in 'llvm.func'
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}
