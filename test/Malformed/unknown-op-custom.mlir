// Malformed: an nn op that does not exist, in custom form.
// ERROR-LINE: 5
// ERROR: custom op 'nn.foo' is unknown
func.func @f(%x: tensor<4xf32>) {
  nn.foo %x : tensor<4xf32>
  return
}
