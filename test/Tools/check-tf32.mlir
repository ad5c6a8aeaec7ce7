// RUN: lamina-run %s --random --check -q | FileCheck %s
// RUN: not lamina-run %s --random --check -q --rtol 1e-4 --atol 1e-5 | FileCheck %s --check-prefix=STRICT

// A matmul that allows tf32 (precision = "tf32"): the reference rounds its
// operands to tf32 and the cpu target computes in f32, so --check holds the
// result to f16's tolerance (tf32 keeps f16's 10 mantissa bits), not f32's,
// which an explicit --rtol / --atol still asks for.
// CHECK: check res0 (tensor<64x48xf32>): {{.*}}(rtol 0.01, atol 0.002): ok
// STRICT: MISMATCH
func.func @main(%a: tensor<64x256xf32>, %b: tensor<256x48xf32>) -> tensor<64x48xf32> {
  %0 = "nn.matmul"(%a, %b) {precision = "tf32"} : (tensor<64x256xf32>, tensor<256x48xf32>) -> tensor<64x48xf32>
  return %0 : tensor<64x48xf32>
}
