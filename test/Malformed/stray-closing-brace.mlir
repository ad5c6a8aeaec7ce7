// Malformed: a closing brace with nothing open.
// ERROR-LINE: 6
// ERROR: expected operation name in quotes
func.func @f(%x: tensor<4xf32>) {
  return
}
}
