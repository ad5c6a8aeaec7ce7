// Malformed: a matmul whose inner dimensions differ.
// ERROR-LINE: 5
// ERROR: 'nn.matmul' op matmul contraction dims differ: 8 vs 4
func.func @f(%a: tensor<2x8xf32>, %b: tensor<4x3xf32>) {
  %0 = "nn.matmul"(%a, %b) : (tensor<2x8xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  return
}
