// Malformed: a reshape whose result is too large, between valid ops.
// ERROR-LINE: 6
// ERROR: overflow 64-bit sizes
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "nn.broadcast_to"(%0) : (tensor<4xf32>) -> tensor<4294967296x4294967296x4xf32>
  return
}
