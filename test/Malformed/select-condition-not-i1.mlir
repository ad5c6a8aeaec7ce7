// Malformed: a select whose condition is a float tensor.
// ERROR-LINE: 5
// ERROR: 'nn.select' op operand #0 has element type f32
func.func @f(%c: tensor<4xf32>, %x: tensor<4xf32>) {
  %0 = "nn.select"(%c, %x, %x) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}
