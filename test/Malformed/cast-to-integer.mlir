// Malformed: a cast to i32, which nn does not have.
// ERROR-LINE: 5
// ERROR: i32
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.cast"(%x) : (tensor<4xf32>) -> tensor<4xi32>
  return
}
