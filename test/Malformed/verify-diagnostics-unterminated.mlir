// Malformed: an expected-error whose pattern is never closed.
// TOOL: lamina-opt --verify-diagnostics
// ERROR-LINE: 6
// ERROR: malformed expected-error directive: it lacks '}}' closing its pattern
func.func @f(%x: tensor<4xf32>) {
  // expected-error {{no such error
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}
