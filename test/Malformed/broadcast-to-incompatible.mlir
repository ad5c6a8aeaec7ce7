// Malformed: a broadcast_to a shape that does not broadcast.
// ERROR-LINE: 5
// ERROR: cannot broadcast tensor<3xf32> to tensor<2x4xf32>
func.func @f(%x: tensor<3xf32>) {
  %0 = "nn.broadcast_to"(%x) : (tensor<3xf32>) -> tensor<2x4xf32>
  return
}
