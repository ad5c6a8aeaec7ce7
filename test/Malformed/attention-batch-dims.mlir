// Malformed: an attention whose key batch differs from the query's.
// ERROR-LINE: 5
// ERROR: attention batch dims differ
func.func @f(%q: tensor<2x4x8xf32>, %k: tensor<3x4x8xf32>, %v: tensor<3x4x8xf32>) {
  %0 = "nn.attention"(%q, %k, %v) : (tensor<2x4x8xf32>, tensor<3x4x8xf32>, tensor<3x4x8xf32>) -> tensor<2x4x8xf32>
  return
}
