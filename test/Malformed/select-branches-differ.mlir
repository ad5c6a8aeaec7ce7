// Malformed: a select whose branches have different element types.
// ERROR-LINE: 5
// ERROR: 'nn.select' op element types differ: f32 vs f16
func.func @f(%c: tensor<4xi1>, %x: tensor<4xf32>, %y: tensor<4xf16>) {
  %0 = "nn.select"(%c, %x, %y) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return
}
