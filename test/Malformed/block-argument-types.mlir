// Malformed: a branch to a block with the wrong argument type.
// ERROR-LINE: 5
// ERROR: type mismatch for bb argument
func.func @f(%x: tensor<4xf32>) {
  cf.br ^bb1(%x : tensor<4xf32>)
^bb1(%y: tensor<5xf32>):
  return
}
