// Malformed: a compare whose result is not i1.
// ERROR-LINE: 5
// ERROR: does not match the inferred type tensor<4xi1>
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.compare"(%x, %x) {predicate = "lt"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}
