// An attention with no keys, by the CPU's flash-style lowering (which
// divided by its key tile, 0 here): every query's keys are all hidden,
// which gives 0 (nn.attention's definition), as the NumPy reference does.
// RUN: lamina-run %s --random --seed 0 | FileCheck %s
// RUN: lamina-run %s --random --seed 0 --check -q | FileCheck %s --check-prefix=CHECKED
// CHECKED: check res0 ({{.+}}): {{.*}}ok
// CHECK: res0: tensor<2x3x2xf32> =
// CHECK-NEXT: {{\[\[\[}}0. 0.]
// CHECK-NEXT: [0. 0.]
// CHECK-NEXT: [0. 0.]]
// CHECK-EMPTY:
// CHECK-NEXT: {{\[\[}}0. 0.]
// CHECK-NEXT: [0. 0.]
// CHECK-NEXT: [0. 0.]]]
func.func @main(%q: tensor<2x3x8xf32>, %k: tensor<2x0x8xf32>, %v: tensor<2x0x2xf32>) -> tensor<2x3x2xf32> {
  %0 = "nn.attention"(%q, %k, %v) {causal = true} : (tensor<2x3x8xf32>, tensor<2x0x8xf32>, tensor<2x0x2xf32>) -> tensor<2x3x2xf32>
  return %0 : tensor<2x3x2xf32>
}
