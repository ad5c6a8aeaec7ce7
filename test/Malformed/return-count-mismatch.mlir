// Malformed: a return of two values from a function of one result.
// ERROR-LINE: 5
// ERROR: has 2 operands, but enclosing function (@f) returns 1
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x, %x : tensor<4xf32>, tensor<4xf32>
}
