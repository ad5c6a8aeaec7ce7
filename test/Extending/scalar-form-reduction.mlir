// RUN: lamina-opt %s --load-plugin=%S/Inputs/reduce_prod.py --convert-nn-to-linalg | FileCheck %s
// RUN: lamina-run %s --load-plugin=%S/Inputs/reduce_prod.py --random --check -q | FileCheck %s --check-prefix=CHECKED
// RUN: sed 's/reduce_prod"/reduce_half_sum"/' %s > %t.mlir
// RUN: not lamina-run %t.mlir --load-plugin=%S/Inputs/reduce_prod.py --random --check 2>&1 | FileCheck %s --check-prefix=REFUSED

// A plugin's reduction in the scalar form (identity 1, `acc * x`) on f16:
// an f32 accumulator filled with 1, multiplied into, rounded once; the
// CPU result matches the NumPy reference derived from the same step. A
// step that is not one NumPy's reduce agrees with is reported at the op.

// CHECK-LABEL: func.func @main
// CHECK: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: linalg.fill ins(%[[ONE]] : f32) outs(%{{.+}} : tensor<3xf32>)
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK: ^bb0(%[[IN:.+]]: f16, %[[ACC:.+]]: f32):
// CHECK: %[[X:.+]] = arith.extf %[[IN]] : f16 to f32
// CHECK: arith.mulf %[[ACC]], %[[X]] : f32
// CHECK: arith.truncf %{{.+}} : f32 to f16
// CHECK-NOT: nn.reduce_prod

// CHECKED: check: all results match the reference

// REFUSED: scalar-form-reduction.mlir.tmp.mlir:{{[0-9]+}}:8: error: {{.*}}acc + x, acc * x, maximum(acc, x) or minimum(acc, x), not add(%0, div(%1, 2.0))

func.func @main(%x: tensor<3x5xf16>) -> tensor<3xf16> {
  %0 = "nn.reduce_prod"(%x) {axes = array<i64: 1>} : (tensor<3x5xf16>) -> tensor<3xf16>
  return %0 : tensor<3xf16>
}
