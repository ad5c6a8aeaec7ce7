// An nn program the cuda targets have no kernel for: a sum of integers
// (block reductions fold floats in f32; an integer sum wraps in its type).
func.func @main(%x: tensor<8x4xi32>) -> tensor<8xi32> {
  %0 = "nn.reduce_sum"(%x) {axes = array<i64: 1>} : (tensor<8x4xi32>) -> tensor<8xi32>
  return %0 : tensor<8xi32>
}
