// Reductions over a zero-sized axis (the issue's "reductions over a
// zero-sized axis"): the CPU schedule's tiling aborted the compiler in
// upstream's computeAllSliceParameters ("expected as many ivs as non-zero
// sizes"). Ops with an empty iteration domain are now left unscheduled: a
// sum over nothing is its init, 0; a mean over nothing is NaN, as NumPy's;
// a softmax over an empty axis is empty.
// RUN: lamina-run %s --random --seed 0 --check | FileCheck %s
// CHECK: res0: tensor<3xf32> =
// CHECK-NEXT: [0. 0. 0.]
// CHECK: res2: tensor<3xf32> =
// CHECK-NEXT: [nan nan nan]
// CHECK: check res0 {{.*}}: ok
// CHECK: check res1 {{.*}}: ok
// CHECK: check res2 {{.*}}: ok
// CHECK: check: all results match the reference
func.func @main(%x: tensor<3x0xf32>) -> (tensor<3xf32>, tensor<3x0xf32>, tensor<3xf32>) {
  %0 = "nn.reduce_sum"(%x) {axes = array<i64: 1>} : (tensor<3x0xf32>) -> tensor<3xf32>
  %1 = "nn.softmax"(%x) {axis = 1 : i64} : (tensor<3x0xf32>) -> tensor<3x0xf32>
  %2 = "nn.reduce_mean"(%x) {axes = array<i64: 1>} : (tensor<3x0xf32>) -> tensor<3xf32>
  return %0, %1, %2 : tensor<3xf32>, tensor<3x0xf32>, tensor<3xf32>
}
