// Malformed: a pipeline nested on an op that does not exist.
// TOOL: lamina-opt -p builtin.module(foo.bar(cse))
// ERROR-LINE: none
// ERROR: 'foo.bar' in the pipeline of pass 'cse' is not an operation
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}
