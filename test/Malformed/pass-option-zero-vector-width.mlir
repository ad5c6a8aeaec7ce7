// Malformed: a vector width of zero bits.
// TOOL: lamina-opt --cpu-schedule=vector-bits=0
// ERROR-LINE: none
// ERROR: option 'vector-bits' of pass 'cpu-schedule' must be >= 128, got 0
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}
