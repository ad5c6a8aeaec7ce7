// Malformed: a cast to i8, which nn does not have (its integers are i1, i32 and i64).
// ERROR-LINE: 5
// ERROR: i8
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.cast"(%x) : (tensor<4xf32>) -> tensor<4xi8>
  return
}
