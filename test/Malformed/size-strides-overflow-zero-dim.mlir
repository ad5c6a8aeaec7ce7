// Malformed: a zero-sized tensor whose other dims overflow its strides.
// ERROR-LINE: 4
// ERROR: the strides of its nonzero dims
func.func @f(%x: tensor<0x4294967296x4294967296x4xf32>) {
  return
}
