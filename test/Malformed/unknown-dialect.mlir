// Malformed: an op of a dialect that is not loaded.
// ERROR-LINE: 5
// ERROR: operation being parsed with an unregistered dialect
func.func @f(%x: tensor<4xf32>) {
  "mystery.op"(%x) : (tensor<4xf32>) -> ()
  return
}
