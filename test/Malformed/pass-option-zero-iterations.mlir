// Malformed: a rewrite limit of zero iterations.
// TOOL: lamina-opt --nn-canonicalize=max-iterations=0
// ERROR-LINE: none
// ERROR: must be >= 1, got 0
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}
