// Malformed: a vector given to an nn op.
// ERROR-LINE: 5
// ERROR: expected a ranked tensor, got vector<4xf32>
func.func @f(%x: vector<4xf32>) {
  %0 = "nn.exp"(%x) : (vector<4xf32>) -> vector<4xf32>
  return
}
