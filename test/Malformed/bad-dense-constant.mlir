// Malformed: a dense constant with fewer elements than its type.
// ERROR-LINE: 5
// ERROR: inferred shape of elements literal ([2]) does not match type ([4])
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = arith.constant dense<[1.0, 2.0]> : tensor<4xf32>
  %0 = "nn.add"(%x, %c) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
