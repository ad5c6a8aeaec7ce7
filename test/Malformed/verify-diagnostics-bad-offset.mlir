// Malformed: an expected-error with an offset that is not a number.
// TOOL: lamina-opt --verify-diagnostics
// ERROR-LINE: 6
// ERROR: has no valid '@' offset or count before its pattern
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+x {{foo}}
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}
