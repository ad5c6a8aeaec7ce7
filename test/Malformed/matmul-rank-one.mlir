// Malformed: a matmul of vectors.
// ERROR-LINE: 5
// ERROR: matmul operands must have rank >= 2
func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  %0 = "nn.matmul"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return
}
