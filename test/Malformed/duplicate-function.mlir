// Malformed: two functions with one name.
// ERROR-LINE: 8
// ERROR: redefinition of symbol named 'f'
func.func @f(%x: tensor<4xf32>) {
  return
}

func.func @f(%x: tensor<4xf32>) {
  return
}
