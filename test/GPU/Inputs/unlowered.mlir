// An nn program the cuda targets have no kernel for: an attention whose
// head dims (4096) need more shared memory than a block has.
func.func @main(%q: tensor<16x4096xf32>) -> tensor<16x4096xf32> {
  %0 = "nn.attention"(%q, %q, %q) : (tensor<16x4096xf32>, tensor<16x4096xf32>, tensor<16x4096xf32>) -> tensor<16x4096xf32>
  return %0 : tensor<16x4096xf32>
}
