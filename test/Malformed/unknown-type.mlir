// Malformed: a type of an unknown dialect.
// ERROR-LINE: 5
// ERROR: type '!mystery.tensor' belongs to no loaded dialect
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> !mystery.tensor
  return
}
