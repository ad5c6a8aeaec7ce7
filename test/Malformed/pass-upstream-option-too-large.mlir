// Malformed: an upstream pass option that does not fit in its type.
// TOOL: lamina-opt --canonicalize=max-iterations=99999999999999999999999
// ERROR-LINE: none
// ERROR: invalid options for pass 'canonicalize': for the --max-iterations option
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}
