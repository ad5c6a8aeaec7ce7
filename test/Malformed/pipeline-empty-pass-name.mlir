// Malformed: a pipeline with an empty element.
// TOOL: lamina-opt -p builtin.module(,cse)
// ERROR-LINE: none
// ERROR: expected a pass name
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}
