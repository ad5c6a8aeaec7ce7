// Malformed: a function body without a return.
// ERROR-LINE: 5
// ERROR: block with no terminator
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
}
