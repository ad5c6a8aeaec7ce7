// An attention whose queries and keys have a head dim of 0 (found by
// lamina-fuzz, seed 22, program 399): every score is 0, so each query's
// result is the mean of the values over the keys it sees. The flash-style
// lowering gives q and k one zero feature instead of none.
// RUN: lamina-run %s --random --seed 0 --check -q
// RUN: lamina-run %s --random --seed 0 --check -q --entry=batched_causal
// RUN: lamina-opt %s --convert-nn-to-linalg | FileCheck %s --check-prefix=ROWS

// The whole-row lowering takes the empty sum as it is.
// ROWS-LABEL: func.func @main
// ROWS: linalg.batch_matmul {{.*}} ins({{.*}} : tensor<1x16x0xbf16>, tensor<1x8x0xbf16>)
func.func @main(%q: tensor<16x0xbf16>, %k: tensor<8x0xbf16>, %v: tensor<8x7xbf16>, %mask: tensor<1x8xbf16>) -> tensor<16x7xbf16> {
  %0 = "nn.attention"(%q, %k, %v, %mask) {scale = 0.5 : f32} : (tensor<16x0xbf16>, tensor<8x0xbf16>, tensor<8x7xbf16>, tensor<1x8xbf16>) -> tensor<16x7xbf16>
  return %0 : tensor<16x7xbf16>
}

// ROWS-LABEL: func.func @batched_causal
func.func @batched_causal(%q: tensor<2x3x5x0xf32>, %k: tensor<2x3x9x0xf32>, %v: tensor<2x3x9x4xf32>) -> tensor<2x3x5x4xf32> {
  %0 = "nn.attention"(%q, %k, %v) {causal = true, scale = 0.25 : f32} : (tensor<2x3x5x0xf32>, tensor<2x3x9x0xf32>, tensor<2x3x9x4xf32>) -> tensor<2x3x5x4xf32>
  return %0 : tensor<2x3x5x4xf32>
}
