// RUN: lamina-compile %s --target=cuda:sm_80 --emit=hw | FileCheck %s --check-prefix=HW
// RUN: lamina-run %s --target=cuda:sm_80 --emulate --random --check --rtol 0.01 --atol 0.002 -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-run %s --target=cuda:sm_90a --emulate --random --seed 1 --check --rtol 0.01 --atol 0.002 -q | FileCheck %s --check-prefix=EMULATED
// RUN: %if ptxas %{ lamina-compile %s --target=cuda:sm_80 --emit=manifest | %PYTHON %S/Inputs/no-spills.py | FileCheck %s --check-prefix=CONTRACT %}
// RUN: %if ptxas %{ lamina-compile %s --target=cuda:sm_90a --emit=manifest | %PYTHON %S/Inputs/no-spills.py | FileCheck %s --check-prefix=CONTRACT %}

// f16 matmul chains with degenerate dims compile for both architectures:
// a GEMV (M = 1) with a bias vector + relu and with a [1, N] residual +
// gelu + cast to f32, K = 1 with a [1, N] bias row, N = 1 with a bias of
// one element, K = 0 (the epilogue of zeros: relu of the bias) and M = 0
// (an empty result, no kernel). Emulated, each result matches the nn
// program's NumPy reference (at f16's tolerances throughout: the f32
// result is an f16 result cast); ptxas accepts every kernel with no
// spills and no stack frame.

// HW-LABEL: func.func @main(
// HW-COUNT-5: "hw.launch"
// HW-NOT: "hw.launch"
// HW: return

// EMULATED: check res0 (tensor<1x128xf16>): {{.*}}: ok
// EMULATED: check res1 (tensor<1x128xf32>): {{.*}}: ok
// EMULATED: check res2 (tensor<64x128xf16>): {{.*}}: ok
// EMULATED: check res3 (tensor<64x1xf16>): {{.*}}: ok
// EMULATED: check res4 (tensor<48x40xf16>): max abs error 0, {{.*}}: ok
// EMULATED: check res5 (tensor<0x128xf16>): {{.*}}: ok
// EMULATED: check: all results match the reference

// CONTRACT: main_matmul_0: registers <= 255, no spills, no stack frame
// CONTRACT-NEXT: main_matmul_1: registers <= 255, no spills, no stack frame
// CONTRACT-NEXT: main_matmul_2: registers <= 255, no spills, no stack frame
// CONTRACT-NEXT: main_matmul_3: registers <= 255, no spills, no stack frame
// CONTRACT-NEXT: main_matmul_4: registers <= 255, no spills, no stack frame
// CONTRACT-NOT: main_matmul

func.func @main(%a1: tensor<1x64xf16>, %b1: tensor<64x128xf16>, %bias1: tensor<128xf16>,
                %r1: tensor<1x128xf16>,
                %a2: tensor<64x1xf16>, %b2: tensor<1x128xf16>, %bias2: tensor<1x128xf16>,
                %a3: tensor<64x64xf16>, %b3: tensor<64x1xf16>, %bias3: tensor<1xf16>,
                %a4: tensor<48x0xf16>, %b4: tensor<0x40xf16>, %bias4: tensor<40xf16>,
                %a5: tensor<0x64xf16>, %b5: tensor<64x128xf16>, %bias5: tensor<128xf16>)
    -> (tensor<1x128xf16>, tensor<1x128xf32>, tensor<64x128xf16>, tensor<64x1xf16>,
        tensor<48x40xf16>, tensor<0x128xf16>) {
  %m1 = "nn.matmul"(%a1, %b1) : (tensor<1x64xf16>, tensor<64x128xf16>) -> tensor<1x128xf16>
  %s1 = "nn.add"(%m1, %bias1) : (tensor<1x128xf16>, tensor<128xf16>) -> tensor<1x128xf16>
  %o1 = "nn.relu"(%s1) : (tensor<1x128xf16>) -> tensor<1x128xf16>
  %m1b = "nn.matmul"(%a1, %b1) : (tensor<1x64xf16>, tensor<64x128xf16>) -> tensor<1x128xf16>
  %s1b = "nn.add"(%m1b, %r1) : (tensor<1x128xf16>, tensor<1x128xf16>) -> tensor<1x128xf16>
  %g1b = "nn.gelu"(%s1b) : (tensor<1x128xf16>) -> tensor<1x128xf16>
  %o1b = "nn.cast"(%g1b) : (tensor<1x128xf16>) -> tensor<1x128xf32>
  %m2 = "nn.matmul"(%a2, %b2) : (tensor<64x1xf16>, tensor<1x128xf16>) -> tensor<64x128xf16>
  %o2 = "nn.add"(%m2, %bias2) : (tensor<64x128xf16>, tensor<1x128xf16>) -> tensor<64x128xf16>
  %m3 = "nn.matmul"(%a3, %b3) : (tensor<64x64xf16>, tensor<64x1xf16>) -> tensor<64x1xf16>
  %o3 = "nn.add"(%m3, %bias3) : (tensor<64x1xf16>, tensor<1xf16>) -> tensor<64x1xf16>
  %m4 = "nn.matmul"(%a4, %b4) : (tensor<48x0xf16>, tensor<0x40xf16>) -> tensor<48x40xf16>
  %s4 = "nn.add"(%m4, %bias4) : (tensor<48x40xf16>, tensor<40xf16>) -> tensor<48x40xf16>
  %o4 = "nn.relu"(%s4) : (tensor<48x40xf16>) -> tensor<48x40xf16>
  %m5 = "nn.matmul"(%a5, %b5) : (tensor<0x64xf16>, tensor<64x128xf16>) -> tensor<0x128xf16>
  %o5 = "nn.add"(%m5, %bias5) : (tensor<0x128xf16>, tensor<128xf16>) -> tensor<0x128xf16>
  return %o1, %o1b, %o2, %o3, %o4, %o5 : tensor<1x128xf16>, tensor<1x128xf32>, tensor<64x128xf16>, tensor<64x1xf16>, tensor<48x40xf16>, tensor<0x128xf16>
}
