// Malformed: a reshape that changes the element type.
// ERROR-LINE: 5
// ERROR: reshape changes the element type
func.func @f(%x: tensor<2x3xf32>) {
  %0 = "nn.reshape"(%x) : (tensor<2x3xf32>) -> tensor<6xf16>
  return
}
