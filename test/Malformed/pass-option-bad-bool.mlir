// Malformed: a boolean option given a word.
// TOOL: lamina-opt --nn-canonicalize=remove-unused=maybe
// ERROR-LINE: none
// ERROR: option 'remove-unused' of pass 'nn-canonicalize' expects bool
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}
