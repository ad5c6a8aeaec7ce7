// An nn program the cuda targets have no kernel for: a reduction whose rows
// do not fit in a block's registers.
func.func @main(%x: tensor<2x20000xf32>) -> tensor<2xf32> {
  %0 = "nn.reduce_sum"(%x) {axes = array<i64: 1>} : (tensor<2x20000xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
