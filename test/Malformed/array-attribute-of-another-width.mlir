// Malformed: an array attribute of elements the bindings cannot view (i24).
// ERROR-LINE: 5
// ERROR: 'nn.reduce_sum' op attribute 'axes' must be an array<i64: ...>, got an array of another element type
func.func @f(%x: tensor<2x4xf32>) -> tensor<2xf32> {
  %0 = "nn.reduce_sum"(%x) {axes = array<i24: 1>} : (tensor<2x4xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
