// Malformed: a matmul of f16 and f32.
// ERROR-LINE: 5
// ERROR: element types differ: f16 vs f32
func.func @f(%a: tensor<2x4xf16>, %b: tensor<4x3xf32>) {
  %0 = "nn.matmul"(%a, %b) : (tensor<2x4xf16>, tensor<4x3xf32>) -> tensor<2x3xf16>
  return
}
