// Malformed: an nn op written without its result.
// ERROR-LINE: 5
// ERROR: 'nn.relu' op expects 1 result(s), got 0
func.func @f(%x: tensor<4xf32>) {
  "nn.relu"(%x) : (tensor<4xf32>) -> ()
  return
}
