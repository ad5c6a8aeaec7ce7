// Malformed: an rms_norm whose scale is f16 for f32 input.
// ERROR-LINE: 5
// ERROR: element types differ: f32 vs f16
func.func @f(%x: tensor<2x8xf32>, %g: tensor<8xf16>) {
  %0 = "nn.rms_norm"(%x, %g) : (tensor<2x8xf32>, tensor<8xf16>) -> tensor<2x8xf32>
  return
}
