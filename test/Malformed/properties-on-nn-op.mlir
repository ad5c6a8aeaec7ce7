// Malformed: an nn op written with properties, which Lamina's ops do not have.
// ERROR-LINE: 5
// ERROR: 'nn.softmax' op is written with properties
func.func @f(%x: tensor<2x4xf32>) {
  %0 = "nn.softmax"(%x) <{axis = 0 : i64}> : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return
}
