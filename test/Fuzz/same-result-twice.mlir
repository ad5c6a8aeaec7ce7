// Found by lamina-fuzz (--program 43, --program 1000038), reduced by hand from
// the reducer's output: a function that returns one computed value twice ended
// the compiler with SIGSEGV. Upstream's buffer-results-to-out-params with
// hoist-static-allocs (the CPU pipeline's bufferized stage) erases the hoisted
// allocation once per result; mlir-opt crashes on
//   func.func private @f() -> (memref<4xf32>, memref<4xf32>) {
//     %a = memref.alloc() : memref<4xf32>
//     return %a, %a : memref<4xf32>, memref<4xf32> }
// with --buffer-results-to-out-params=hoist-static-allocs. The pipeline now
// copies the buffer for its second result first (func-copy-repeated-results),
// and so do the cuda targets' hw stage (the emulation ended so too).
// RUN: lamina-run %s --random --seed 0 --check -q | FileCheck %s
// RUN: lamina-run %s --target=cuda:sm_80 --emulate --random --seed 0 --check -q | FileCheck %s
// CHECK: check res0 {{.*}}: ok
// CHECK: check res1 {{.*}}: ok
// CHECK: check: all results match the reference
func.func @main(%x: tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<3x5xf32>) {
  %0 = "nn.exp"(%x) : (tensor<3x5xf32>) -> tensor<3x5xf32>
  return %0, %0 : tensor<3x5xf32>, tensor<3x5xf32>
}
