// Malformed: a call of a function that does not exist.
// ERROR-LINE: 5
// ERROR: 'func.call' op 'nowhere' does not reference a valid function
func.func @f(%x: tensor<4xf32>) {
  %0 = func.call @nowhere(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}
