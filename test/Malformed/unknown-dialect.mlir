// Malformed: an op of a dialect that is not loaded.
// ERROR-LINE: 5
// ERROR: operation 'mystery.op' belongs to no loaded dialect
func.func @f(%x: tensor<4xf32>) {
  "mystery.op"(%x) : (tensor<4xf32>) -> ()
  return
}
