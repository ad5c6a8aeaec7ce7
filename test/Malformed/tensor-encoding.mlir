// Malformed: a tensor with an encoding, which nn ops do not take.
// ERROR-LINE: 5
// ERROR: tensors with an encoding are not supported
func.func @f(%x: tensor<4xf32, "enc">) {
  %0 = "nn.relu"(%x) : (tensor<4xf32, "enc">) -> tensor<4xf32, "enc">
  return
}
