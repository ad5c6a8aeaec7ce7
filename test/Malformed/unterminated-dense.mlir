// Malformed: a dense literal cut short.
// ERROR-LINE: 5
// ERROR: expected
func.func @f() {
  %c = arith.constant dense<[1.0, 2.0 : tensor<2xf32>
  return
}
