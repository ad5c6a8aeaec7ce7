// Malformed: a batched matmul whose batch dims do not broadcast.
// ERROR-LINE: 5
// ERROR: matmul batch dims are not broadcast-compatible
func.func @f(%a: tensor<2x3x4xf32>, %b: tensor<3x4x5xf32>) {
  %0 = "nn.matmul"(%a, %b) : (tensor<2x3x4xf32>, tensor<3x4x5xf32>) -> tensor<2x3x5xf32>
  return
}
