// Malformed: a memref given to an nn op.
// ERROR-LINE: 5
// ERROR: 'nn.relu' op operand #0: expected a ranked tensor
func.func @f(%x: memref<4xf32>) {
  %0 = "nn.relu"(%x) : (memref<4xf32>) -> tensor<4xf32>
  return
}
