// Malformed: a compare with a predicate that does not exist.
// ERROR-LINE: 5
// ERROR: "less" is not one of
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.compare"(%x, %x) {predicate = "less"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return
}
