// Malformed: a splat constant too large for 64-bit sizes.
// ERROR-LINE: 5
// ERROR: overflow 64-bit sizes
func.func @f() {
  %c = arith.constant dense<1.0> : tensor<4611686018427387904x4xf32>
  return
}
