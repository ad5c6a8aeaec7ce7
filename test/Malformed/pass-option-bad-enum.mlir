// Malformed: an upstream enum option given a value it does not have.
// TOOL: lamina-opt --convert-vector-to-llvm=vector-contract-lowering=sideways
// ERROR-LINE: none
// ERROR: invalid options for pass 'convert-vector-to-llvm'
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}
