// bf16 matmuls computed with vdpbf16ps (compiled for Zen 5's model, whose
// dot product is its fast path, and run on this host) match the NumPy
// reference to within one rounding to bf16: products are exact in f32, so
// only the order of the f32 sums differs. Shapes with an odd K (its last
// pair padded with a zero), rows no register tile divides, columns short
// of a panel, a batch, a bias and relu epilogue, two threads.
// REQUIRES: avx512bf16
// RUN: lamina-run %s --entry square --target=cpu:znver5 --random --check --rtol=0.0079 --atol=0.001 -q | FileCheck %s
// RUN: lamina-run %s --entry odd --target=cpu:znver5 --random --check --rtol=0.0079 --atol=0.001 -q | FileCheck %s
// RUN: lamina-run %s --entry odd --target=cpu:znver5,threads=2 --random --check --rtol=0.0079 --atol=0.001 -q | FileCheck %s
// RUN: lamina-run %s --entry batched_bias_relu --target=cpu:znver5 --random --check --rtol=0.0079 --atol=0.001 -q | FileCheck %s
// RUN: lamina-compile %s --target=cpu:znver5 --emit=asm | FileCheck %s --check-prefix=ASM

// CHECK: check: all results match the reference
// ASM: vdpbf16ps

func.func @square(%a: tensor<128x128xbf16>, %b: tensor<128x128xbf16>) -> tensor<128x128xbf16> {
  %0 = "nn.matmul"(%a, %b) : (tensor<128x128xbf16>, tensor<128x128xbf16>) -> tensor<128x128xbf16>
  return %0 : tensor<128x128xbf16>
}

func.func @odd(%a: tensor<37x97xbf16>, %b: tensor<97x50xbf16>) -> tensor<37x50xbf16> {
  %0 = "nn.matmul"(%a, %b) : (tensor<37x97xbf16>, tensor<97x50xbf16>) -> tensor<37x50xbf16>
  return %0 : tensor<37x50xbf16>
}

func.func @batched_bias_relu(%a: tensor<3x16x41xbf16>, %b: tensor<41x64xbf16>, %c: tensor<64xbf16>) -> tensor<3x16x64xbf16> {
  %0 = "nn.matmul"(%a, %b) : (tensor<3x16x41xbf16>, tensor<41x64xbf16>) -> tensor<3x16x64xbf16>
  %1 = "nn.add"(%0, %c) : (tensor<3x16x64xbf16>, tensor<64xbf16>) -> tensor<3x16x64xbf16>
  %2 = "nn.relu"(%1) : (tensor<3x16x64xbf16>) -> tensor<3x16x64xbf16>
  return %2 : tensor<3x16x64xbf16>
}
