// Malformed: an expected-error with text after its pattern.
// TOOL: lamina-opt --verify-diagnostics
// ERROR-LINE: 6
// ERROR: has text after the '}}' closing its pattern
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{x}} and more
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}
