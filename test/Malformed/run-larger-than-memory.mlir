// Malformed: an intermediate larger than any machine's memory.
// TOOL: lamina-run --random
// ERROR-LINE: 6
// ERROR: bytes, more than this machine's
func.func @main(%x: tensor<2xf32>) {
  %0 = "nn.broadcast_to"(%x) : (tensor<2xf32>) -> tensor<1099511627776x2xf32>
  return
}
