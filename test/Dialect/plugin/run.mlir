// RUN: lamina-compile --load-plugin=%S/Inputs/plugtest.py %s --emit=linalg | FileCheck %s --check-prefix=LINALG
// RUN: lamina-run --load-plugin=%S/Inputs/plugtest.py %s --random --seed 3 --check | FileCheck %s

// A plugin's elementwise op lowers through its registered lowering (and
// fuses with the nn op between its two uses into one generic), runs on the
// CPU, and matches its NumPy reference (f32: rtol 1e-4).

// LINALG-LABEL: func.func @main
// LINALG-NOT: plugtest.
// LINALG: linalg.generic
// LINALG: math.tanh
// LINALG-NEXT: arith.mulf
// LINALG-NEXT: arith.maximumf
// LINALG-NEXT: math.tanh
// LINALG-NEXT: arith.addf
// LINALG-NOT: linalg.generic

// CHECK: check res0 (tensor<3x16xf32>): {{.*}}: ok
// CHECK: check: all results match the reference
func.func @main(%x: tensor<3x16xf32>, %b: tensor<16xf32>) -> tensor<3x16xf32> {
  %0 = "plugtest.scaled_tanh"(%x) {alpha = 2.5 : f64} : (tensor<3x16xf32>) -> tensor<3x16xf32>
  %1 = "nn.relu"(%0) : (tensor<3x16xf32>) -> tensor<3x16xf32>
  %2 = "plugtest.scaled_tanh"(%1, %b) : (tensor<3x16xf32>, tensor<16xf32>) -> tensor<3x16xf32>
  return %2 : tensor<3x16xf32>
}
