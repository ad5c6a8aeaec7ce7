// Malformed: bytes that are not UTF-8 in the middle of the file.
// ERROR-LINE: 5
// ERROR: unexpected character
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "nn.relu"(%x) ÿþ : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
