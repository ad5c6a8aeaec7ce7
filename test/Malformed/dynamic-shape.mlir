// Malformed: a dynamic dimension where the op takes static shapes only.
// ERROR-LINE: 5
// ERROR: 'nn.cumsum' op operand #0: dim 0 of tensor<?xf32> is dynamic ('?'); 'nn.cumsum' takes statically shaped tensors only
func.func @f(%x: tensor<?xf32>) {
  %0 = "nn.cumsum"(%x) {axis = 0 : i64} : (tensor<?xf32>) -> tensor<4xf32>
  return
}
