// Malformed: a cast to si16, which nn does not have (its integers are signless or unsigned).
// ERROR-LINE: 5
// ERROR: si16
func.func @f(%x: tensor<4xf32>) {
  %0 = "nn.cast"(%x) : (tensor<4xf32>) -> tensor<4xsi16>
  return
}
