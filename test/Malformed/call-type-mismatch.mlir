// Malformed: a call whose operand type differs from the callee's.
// ERROR-LINE: 6
// ERROR: operand type mismatch
func.func private @g(tensor<4xf32>) -> tensor<4xf32>
func.func @f(%x: tensor<5xf32>) {
  %0 = func.call @g(%x) : (tensor<5xf32>) -> tensor<4xf32>
  return
}
