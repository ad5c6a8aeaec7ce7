// Malformed: a cast that changes the shape.
// ERROR-LINE: 5
// ERROR: cast changes the shape
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.cast"(%x) : (tensor<4xf32>) -> tensor<2xf16>
  return
}
