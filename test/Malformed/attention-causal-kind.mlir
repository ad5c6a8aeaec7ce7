// Malformed: causal given as a string.
// ERROR-LINE: 5
// ERROR: 'nn.attention' op attribute 'causal'
func.func @f(%q: tensor<4x8xf32>) {
  %0 = "nn.attention"(%q, %q, %q) {causal = "yes"} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}
