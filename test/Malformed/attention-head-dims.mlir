// Malformed: attention with query and key head sizes that differ.
// ERROR-LINE: 5
// ERROR: 'nn.attention' op attention head dims of q and k differ: 8 vs 4
func.func @f(%q: tensor<2x8xf32>, %k: tensor<2x4xf32>) {
  %0 = "nn.attention"(%q, %k, %k) : (tensor<2x8xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return
}
