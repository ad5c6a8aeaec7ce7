// Malformed: a concat of a matrix and a vector.
// ERROR-LINE: 5
// ERROR: concat operands have different ranks
func.func @f(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  %0 = "nn.concat"(%a, %b) {axis = 0 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<5x3xf32>
  return
}
