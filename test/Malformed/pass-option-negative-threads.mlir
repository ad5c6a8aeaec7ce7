// Malformed: a negative thread count.
// TOOL: lamina-opt --cpu-schedule=threads=-1
// ERROR-LINE: none
// ERROR: option 'threads' of pass 'cpu-schedule' must be >= 0, got -1
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}
