// An attention whose queries and keys have a head dim of 0 (found by
// lamina-fuzz, seed 22, program 399): every score is 0, so the result is the
// mean of the values, but convert-nn-to-linalg's pipeline fails with
// "offset 2 is out-of-bounds: 0 >= 0". Known open: issue 20's campaign.
// XFAIL: *
// RUN: lamina-run %s --random --seed 0 --check -q
func.func @main(%q: tensor<16x0xbf16>, %k: tensor<8x0xbf16>, %v: tensor<8x7xbf16>, %mask: tensor<1x8xbf16>) -> tensor<16x7xbf16> {
  %0 = "nn.attention"(%q, %k, %v, %mask) {scale = 0.5 : f32} : (tensor<16x0xbf16>, tensor<8x0xbf16>, tensor<8x7xbf16>, tensor<1x8xbf16>) -> tensor<16x7xbf16>
  return %0 : tensor<16x7xbf16>
}
