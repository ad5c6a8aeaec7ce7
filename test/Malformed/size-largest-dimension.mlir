// Malformed: a dimension of 2^63-1 f32 elements, whose bytes overflow.
// ERROR-LINE: 5
// ERROR: 9223372036854775807x2xf32>' is too large
func.func @f(%x: tensor<2xf32>) {
  %0 = "nn.broadcast_to"(%x) : (tensor<2xf32>) -> tensor<9223372036854775807x2xf32>
  return
}
