// Malformed: functions that call each other in a cycle, the cycle named.
// TOOL: lamina-compile --emit=llvm
// ERROR-LINE: 14
// ERROR: recursion is not supported: the calls @even -> @odd -> @even form a cycle (a call graph with a cycle would overflow the stack at run time)
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @even(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @even(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @odd(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func private @odd(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @even(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
