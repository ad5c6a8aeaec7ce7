// Malformed: lamina-compile on a tensor too large for 64-bit sizes.
// TOOL: lamina-compile --emit=llvm
// ERROR-LINE: 5
// ERROR: overflow 64-bit sizes
func.func @main(%x: tensor<4294967296x4294967296x4xf32>) {
  return
}
