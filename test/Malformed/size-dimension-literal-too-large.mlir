// Malformed: a dimension that does not fit in 64 bits.
// ERROR-LINE: 4
// ERROR: invalid dimension
func.func @f(%x: tensor<99999999999999999999xf32>) {
  return
}
