// Malformed: a tensor of 2^32 x 2^32 x 4 elements.
// ERROR-LINE: 4
// ERROR: overflow 64-bit sizes
func.func @f(%x: tensor<4294967296x4294967296x4xf32>) {
  return
}
