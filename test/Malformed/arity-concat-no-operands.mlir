// Malformed: a concat of nothing.
// ERROR-LINE: 5
// ERROR: expects at least
func.func @f() {
  %0 = "nn.concat"() {axis = 0 : i64} : () -> tensor<4xf32>
  return
}
