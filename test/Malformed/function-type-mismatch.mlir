// Malformed: an nn op whose declared operand type differs from its operand's.
// ERROR-LINE: 5
// ERROR: use of value '%x' expects different type than prior uses
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.relu"(%x) : (tensor<5xf32>) -> tensor<5xf32>
  return
}
