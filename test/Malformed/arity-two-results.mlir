// Malformed: an op with two results.
// ERROR-LINE: 5
// ERROR: op expects exactly 1 results, but got 2
func.func @f(%x: tensor<4xf32>) {
  %0:2 = "nn.exp"(%x) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}
