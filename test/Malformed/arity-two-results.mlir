// Malformed: an op with two results.
// ERROR-LINE: 5
// ERROR: 'nn.exp' op expects 1 result(s), got 2
func.func @f(%x: tensor<4xf32>) {
  %0:2 = "nn.exp"(%x) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}
