// Malformed: a pass that does not exist.
// TOOL: lamina-opt --nn-fuse-everything
// ERROR-LINE: none
// ERROR: unknown pass 'nn-fuse-everything'
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}
