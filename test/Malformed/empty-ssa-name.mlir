// Malformed: a value named by '%' alone.
// ERROR-LINE: 5
// ERROR: invalid SSA name
func.func @f(%x: tensor<4xf32>) {
  % = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return
}
