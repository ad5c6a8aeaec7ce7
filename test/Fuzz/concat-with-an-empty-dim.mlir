// A concatenation of operands with a 0-sized dim other than the joined one
// (found by lamina-fuzz's degenerate programs): the slices convert-nn-to-linalg
// made of it failed upstream's verifier in one-shot-bufferize ("offset 1 is
// out-of-bounds: 0 >= 0"). The result is an empty tensor.
// RUN: lamina-run %s --random --seed 0 --check -q
func.func @main(%a: tensor<33x0x11xf32>, %b: tensor<3x0x11xf32>) -> tensor<36x0x11xf32> {
  %0 = "nn.concat"(%a, %b) {axis = 0 : i64} : (tensor<33x0x11xf32>, tensor<3x0x11xf32>) -> tensor<36x0x11xf32>
  return %0 : tensor<36x0x11xf32>
}
