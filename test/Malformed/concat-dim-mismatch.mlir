// Malformed: a concat whose other dims differ.
// ERROR-LINE: 5
// ERROR: concat operand #1 differs in dim 1: 4 vs 3
func.func @f(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) {
  %0 = "nn.concat"(%a, %b) {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return
}
