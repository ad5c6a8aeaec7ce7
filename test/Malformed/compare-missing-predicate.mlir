// Malformed: a compare without its predicate.
// ERROR-LINE: 5
// ERROR: 'nn.compare' op requires attribute 'predicate'
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.compare"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return
}
