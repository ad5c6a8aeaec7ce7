// A pad of an operand with a 0-sized dim (found by lamina-fuzz's degenerate
// programs): the slice that convert-nn-to-linalg inserted the empty operand
// into the padded result with failed upstream's verifier in one-shot-bufferize
// ("offset 0 is out-of-bounds: 1 >= 1"). The result is all padding value.
// RUN: lamina-run %s --random --seed 0 --check -q
func.func @main(%x: tensor<0x16xf32>) -> tensor<1x21xf32> {
  %0 = "nn.pad"(%x) {low = array<i64: 1, 2>, high = array<i64: 0, 3>, value = 1.0 : f32} : (tensor<0x16xf32>) -> tensor<1x21xf32>
  return %0 : tensor<1x21xf32>
}
