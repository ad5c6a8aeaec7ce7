// Malformed: an expected-error that no diagnostic meets.
// TOOL: lamina-opt --verify-diagnostics
// ERROR-LINE: 6
// ERROR: expected error "this is not reported" was not produced
func.func @f(%x: tensor<4xf32>) {
  // expected-error @+1 {{this is not reported}}
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}
