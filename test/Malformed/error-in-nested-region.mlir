// Malformed: a bad op inside an scf.if region.
// ERROR-LINE: 6
// ERROR: 'nn.tanh' op result type tensor<8xf32> does not match the inferred type tensor<4xf32>
func.func @f(%c: i1, %x: tensor<4xf32>) {
  scf.if %c {
    %0 = "nn.tanh"(%x) : (tensor<4xf32>) -> tensor<8xf32>
  }
  return
}
