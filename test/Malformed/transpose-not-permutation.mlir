// Malformed: a transpose whose perm repeats a dim.
// ERROR-LINE: 5
// ERROR: is not a permutation
func.func @f(%x: tensor<2x3xf32>) {
  %0 = "nn.transpose"(%x) {perm = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  return
}
