// Malformed: a function that calls itself (it compiled, and lamina-run died
// of a stack overflow).
// TOOL: lamina-run --random
// ERROR-LINE: 7
// ERROR: recursion is not supported: @main calls itself (a call graph with a cycle would overflow the stack at run time)
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @main(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
