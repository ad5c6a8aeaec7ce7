// An nn program the cuda targets have no kernel for: a reduction over a
// leading axis.
func.func @main(%x: tensor<8x8xf32>) -> tensor<8xf32> {
  %0 = "nn.reduce_sum"(%x) {axes = array<i64: 0>} : (tensor<8x8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
