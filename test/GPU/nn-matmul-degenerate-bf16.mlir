// RUN: lamina-compile %s --target=cuda:sm_90a --emit=hw | FileCheck %s --check-prefix=HW
// RUN: lamina-run %s --target=cuda:sm_80 --emulate --random --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-run %s --target=cuda:sm_90a --emulate --random --seed 1 --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: %if ptxas %{ lamina-compile %s --target=cuda:sm_80 --emit=manifest | %PYTHON %S/Inputs/no-spills.py | FileCheck %s --check-prefix=CONTRACT %}
// RUN: %if ptxas %{ lamina-compile %s --target=cuda:sm_90a --emit=manifest | %PYTHON %S/Inputs/no-spills.py | FileCheck %s --check-prefix=CONTRACT %}

// bf16 matmul chains with degenerate dims, batched and not: a batch of
// one GEMV with a residual of the result's shape (1 x 1 x N) + gelu, a
// batch of one with a [1, N] bias row + relu, 1 x 1 x 1 with a residual,
// K = 1 batched, K = 0 with a residual + relu, N = 0 with a bias and an
// empty batch (the last two: no kernel). Emulated, each result matches
// the nn program's NumPy reference at bf16's tolerances; ptxas accepts
// every kernel with no spills and no stack frame.

// HW-LABEL: func.func @main(
// HW-COUNT-5: "hw.launch"
// HW-NOT: "hw.launch"
// HW: return

// EMULATED: check res0 (tensor<1x1x128xbf16>): {{.*}}: ok
// EMULATED: check res1 (tensor<1x16x64xbf16>): {{.*}}: ok
// EMULATED: check res2 (tensor<1x1xbf16>): {{.*}}: ok
// EMULATED: check res3 (tensor<3x32x24xbf16>): {{.*}}: ok
// EMULATED: check res4 (tensor<20x24xbf16>): max abs error 0, {{.*}}: ok
// EMULATED: check res5 (tensor<16x0xbf16>): {{.*}}: ok
// EMULATED: check res6 (tensor<0x8x16xbf16>): {{.*}}: ok
// EMULATED: check: all results match the reference

// CONTRACT: main_matmul_0: registers <= 255, no spills, no stack frame
// CONTRACT-NEXT: main_matmul_1: registers <= 255, no spills, no stack frame
// CONTRACT-NEXT: main_matmul_2: registers <= 255, no spills, no stack frame
// CONTRACT-NEXT: main_matmul_3: registers <= 255, no spills, no stack frame
// CONTRACT-NEXT: main_matmul_4: registers <= 255, no spills, no stack frame
// CONTRACT-NOT: main_matmul

func.func @main(%a0: tensor<1x1x64xbf16>, %b0: tensor<1x64x128xbf16>, %r0: tensor<1x1x128xbf16>,
                %a1: tensor<1x16x32xbf16>, %b1: tensor<1x32x64xbf16>, %bias1: tensor<1x64xbf16>,
                %a2: tensor<1x1xbf16>, %b2: tensor<1x1xbf16>, %r2: tensor<1x1xbf16>,
                %a3: tensor<3x32x1xbf16>, %b3: tensor<3x1x24xbf16>,
                %a4: tensor<20x0xbf16>, %b4: tensor<0x24xbf16>, %r4: tensor<20x24xbf16>,
                %a5: tensor<16x32xbf16>, %b5: tensor<32x0xbf16>, %bias5: tensor<0xbf16>,
                %a6: tensor<0x8x64xbf16>, %b6: tensor<0x64x16xbf16>)
    -> (tensor<1x1x128xbf16>, tensor<1x16x64xbf16>, tensor<1x1xbf16>, tensor<3x32x24xbf16>,
        tensor<20x24xbf16>, tensor<16x0xbf16>, tensor<0x8x16xbf16>) {
  %m0 = "nn.matmul"(%a0, %b0) : (tensor<1x1x64xbf16>, tensor<1x64x128xbf16>) -> tensor<1x1x128xbf16>
  %s0 = "nn.add"(%m0, %r0) : (tensor<1x1x128xbf16>, tensor<1x1x128xbf16>) -> tensor<1x1x128xbf16>
  %o0 = "nn.gelu"(%s0) : (tensor<1x1x128xbf16>) -> tensor<1x1x128xbf16>
  %m1 = "nn.matmul"(%a1, %b1) : (tensor<1x16x32xbf16>, tensor<1x32x64xbf16>) -> tensor<1x16x64xbf16>
  %s1 = "nn.add"(%m1, %bias1) : (tensor<1x16x64xbf16>, tensor<1x64xbf16>) -> tensor<1x16x64xbf16>
  %o1 = "nn.relu"(%s1) : (tensor<1x16x64xbf16>) -> tensor<1x16x64xbf16>
  %m2 = "nn.matmul"(%a2, %b2) : (tensor<1x1xbf16>, tensor<1x1xbf16>) -> tensor<1x1xbf16>
  %o2 = "nn.add"(%m2, %r2) : (tensor<1x1xbf16>, tensor<1x1xbf16>) -> tensor<1x1xbf16>
  %o3 = "nn.matmul"(%a3, %b3) : (tensor<3x32x1xbf16>, tensor<3x1x24xbf16>) -> tensor<3x32x24xbf16>
  %m4 = "nn.matmul"(%a4, %b4) : (tensor<20x0xbf16>, tensor<0x24xbf16>) -> tensor<20x24xbf16>
  %s4 = "nn.add"(%m4, %r4) : (tensor<20x24xbf16>, tensor<20x24xbf16>) -> tensor<20x24xbf16>
  %o4 = "nn.relu"(%s4) : (tensor<20x24xbf16>) -> tensor<20x24xbf16>
  %m5 = "nn.matmul"(%a5, %b5) : (tensor<16x32xbf16>, tensor<32x0xbf16>) -> tensor<16x0xbf16>
  %o5 = "nn.add"(%m5, %bias5) : (tensor<16x0xbf16>, tensor<0xbf16>) -> tensor<16x0xbf16>
  %o6 = "nn.matmul"(%a6, %b6) : (tensor<0x8x64xbf16>, tensor<0x64x16xbf16>) -> tensor<0x8x16xbf16>
  return %o0, %o1, %o2, %o3, %o4, %o5, %o6 : tensor<1x1x128xbf16>, tensor<1x16x64xbf16>, tensor<1x1xbf16>, tensor<3x32x24xbf16>, tensor<20x24xbf16>, tensor<16x0xbf16>, tensor<0x8x16xbf16>
}
