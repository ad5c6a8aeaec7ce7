// RUN: lamina-opt %s --load-plugin=%S/Inputs/leaky_relu.py --convert-nn-to-linalg | FileCheck %s --check-prefix=LINALG
// RUN: lamina-compile %s --load-plugin=%S/Inputs/leaky_relu.py --target=cuda:sm_80 --emit=hw | FileCheck %s --check-prefix=HW
// RUN: lamina-run %s --load-plugin=%S/Inputs/leaky_relu.py --target=cuda:sm_80 --emulate --random --check -q | FileCheck %s --check-prefix=CHECKED
// RUN: sed 's/leaky_relu"/half_exp"/' %s > %t.mlir
// RUN: lamina-compile %t.mlir --load-plugin=%S/Inputs/leaky_relu.py --target=cuda:sm_80 --emit=hw | FileCheck %s --check-prefix=NOEPILOGUE
// RUN: lamina-run %t.mlir --load-plugin=%S/Inputs/leaky_relu.py --target=cuda:sm_80 --emulate --random --check -q | FileCheck %s --check-prefix=CHECKED

// A plugin's op defined in the scalar form, `where(x > 0, x, 0.01 * x)`,
// on bf16: its linalg body computes in f32 and rounds once; it becomes
// the epilogue of the matmul's hw kernel (the same expression in arith
// ops); the emulated kernel matches its NumPy reference. An op
// whose expression uses exp has no arith-only body: no epilogue takes it,
// and it is an elementwise kernel of its own after the matmul's.

// LINALG-LABEL: func.func @main
// LINALG: linalg.matmul
// LINALG: ^bb0(%[[IN:.+]]: bf16, %{{.+}}: bf16):
// LINALG: %[[X:.+]] = arith.extf %[[IN]] : bf16 to f32
// LINALG-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// LINALG-DAG: %[[SLOPE:.+]] = arith.constant 0.00999999977 : f32
// LINALG-DAG: %[[POSITIVE:.+]] = arith.cmpf ogt, %[[X]], %[[ZERO]] : f32
// LINALG-DAG: %[[SCALED:.+]] = arith.mulf %[[SLOPE]], %[[X]] : f32
// LINALG: %[[CHOSEN:.+]] = arith.select %[[POSITIVE]], %[[X]], %[[SCALED]] : f32
// LINALG: arith.truncf %[[CHOSEN]] : f32 to bf16
// LINALG-NOT: nn.leaky_relu

// HW-LABEL: func.func private @main_matmul_0_epilogue(%{{.+}}: f32) -> bf16
// HW: arith.cmpf ogt
// HW: arith.select
// HW: arith.truncf
// HW: func.func private @main_matmul_0
// HW-NOT: nn.leaky_relu

// CHECKED: check: all results match the reference

// NOEPILOGUE-LABEL: func.func @main
// NOEPILOGUE: kernel = @main_matmul_0
// NOEPILOGUE: kernel = @main_half_exp_0
// NOEPILOGUE-LABEL: func.func private @main_half_exp_0
// NOEPILOGUE: "hw.elementwise"(%{{.+}}, %{{.+}}) {fn = "nn.half_exp"}

func.func @main(%x: tensor<40x24xbf16>, %w: tensor<24x16xbf16>) -> tensor<40x16xbf16> {
  %0 = "nn.matmul"(%x, %w) : (tensor<40x24xbf16>, tensor<24x16xbf16>) -> tensor<40x16xbf16>
  %1 = "nn.leaky_relu"(%0) : (tensor<40x16xbf16>) -> tensor<40x16xbf16>
  return %1 : tensor<40x16xbf16>
}
