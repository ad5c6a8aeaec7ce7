// Malformed: an attention whose values and keys have different lengths.
// ERROR-LINE: 5
// ERROR: attention key and value lengths differ: 6 vs 5
func.func @f(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<5x8xf32>) {
  %0 = "nn.attention"(%q, %k, %v) : (tensor<4x8xf32>, tensor<6x8xf32>, tensor<5x8xf32>) -> tensor<4x8xf32>
  return
}
