// Malformed: a Lamina pass option that does not fit in 64 bits.
// TOOL: lamina-opt --nn-canonicalize=max-iterations=99999999999999999999999
// ERROR-LINE: none
// ERROR: option 'max-iterations' of pass 'nn-canonicalize' must be an integer that fits in 64 bits
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}
