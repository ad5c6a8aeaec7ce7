// Malformed: an add of f32 and bf16.
// ERROR-LINE: 5
// ERROR: 'nn.add' op element types differ: f32 vs bf16
func.func @f(%x: tensor<4xf32>, %y: tensor<4xbf16>) {
  %0 = "nn.add"(%x, %y) : (tensor<4xf32>, tensor<4xbf16>) -> tensor<4xf32>
  return
}
