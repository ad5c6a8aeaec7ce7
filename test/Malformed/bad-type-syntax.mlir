// Malformed: a tensor type without its closing '>'.
// ERROR-LINE: 5
// ERROR: expected '>'
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.relu"(%x) : (tensor<4xf32) -> tensor<4xf32>
  return
}
