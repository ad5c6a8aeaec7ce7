// An nn program the cuda targets have no kernel for.
func.func @main(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %0 = "nn.relu"(%x) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
