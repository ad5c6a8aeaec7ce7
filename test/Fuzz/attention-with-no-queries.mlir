// An attention with no queries (found by lamina-fuzz's degenerate
// programs): the CPU's flash-style lowering of convert-nn-to-linalg built
// tensor slices whose offsets upstream's verifier rejected ("offset 1 is
// out-of-bounds: 0 >= 0"). The result is an empty tensor.
// RUN: lamina-run %s --random --seed 0 --check -q
func.func @main(%q: tensor<13x0x11xf32>, %k: tensor<13x3x11xf32>, %v: tensor<13x3x1xf32>) -> tensor<13x0x1xf32> {
  %0 = "nn.attention"(%q, %k, %v) {causal = true} : (tensor<13x0x11xf32>, tensor<13x3x11xf32>, tensor<13x3x1xf32>) -> tensor<13x0x1xf32>
  return %0 : tensor<13x0x1xf32>
}
