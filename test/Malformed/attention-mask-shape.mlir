// Malformed: an attention mask that does not broadcast to the scores.
// ERROR-LINE: 5
// ERROR: does not broadcast to the scores
func.func @f(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>, %m: tensor<4x5xf32>) {
  %0 = "nn.attention"(%q, %k, %v, %m) : (tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>, tensor<4x5xf32>) -> tensor<4x8xf32>
  return
}
