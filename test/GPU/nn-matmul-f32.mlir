// RUN: lamina-compile %s --target=cuda:sm_80 --emit=hw | FileCheck %s --check-prefix=HW
// RUN: lamina-run %s --target=cuda:sm_80 --emulate --random --check --rtol 1e-5 --atol 1e-5 -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-run %s --target=cuda:sm_90a --emulate --random --seed 1 --check --rtol 1e-5 --atol 1e-5 -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-run %s --entry half --target=cuda:sm_80 --emulate --random --seed 2 --check -q | FileCheck %s --check-prefix=HALF
// RUN: lamina-run %s --entry half --target=cuda:sm_90a --emulate --random --seed 3 --check -q | FileCheck %s --check-prefix=HALF
// RUN: not lamina-run %s --entry allowed --random --check --rtol 1e-5 --atol 1e-5 -q | FileCheck %s --check-prefix=CPU
// RUN: %if ptxas %{ lamina-compile %s --target=cuda:sm_80 --emit=manifest | %PYTHON %S/Inputs/no-spills.py | FileCheck %s --check-prefix=CONTRACT %}
// RUN: %if ptxas %{ lamina-compile %s --target=cuda:sm_90a --emit=manifest | %PYTHON %S/Inputs/no-spills.py | FileCheck %s --check-prefix=CONTRACT %}
// RUN: %if ptxas %{ lamina-compile %S/Inputs/matmul-f32-2048.mlir --target=cuda:sm_80 --emit=manifest | %PYTHON %S/Inputs/no-spills.py | FileCheck %s --check-prefix=LARGE %}
// RUN: %if ptxas %{ lamina-compile %S/Inputs/matmul-f32-2048.mlir --target=cuda:sm_90a --emit=manifest | %PYTHON %S/Inputs/no-spills.py | FileCheck %s --check-prefix=LARGE %}

// f32 matmuls on tensor cores, emulated against the nn program's NumPy
// reference on both architectures at f32's tolerance (rtol and atol 1e-5;
// 3xTF32 is within about 1e-6 relative of the reference's f32 sums, a
// single tf32 product would be 1e-3 off): sizes that no tile divides with
// a bias and gelu, a GEMV (M = 1) with a residual and relu, N = 1, K = 0
// (relu of the bias), precision = "tf32" (the reference rounds the
// operands to tf32 as the kernel does), a linear layer (x times the
// transpose of W, read in place) with bias and relu, A transposed, a
// batched matmul with B transposed, a linear layer on batched activations
// (x [2, 17, 40] times W^T with a bias, a residual and gelu: one matmul
// of x's rows). @half, at f16's tolerance: f16 and bf16 matmuls with
// transposed operands, f16 [3, 5, 33, 48] times [48, 40], and a batched
// f32 matmul cast to f16. @allowed on the cpu target, which computes
// precision = "tf32" in f32: at 1e-5 it differs from the tf32 reference
// (the check tells tf32 from f32). ptxas accepts every kernel with no
// spills, here and at 2048^3, where the cost model picks 128x64 tiles for
// 3xTF32 (its fragments twice over) and 128x128 for tf32 and f16.

// HW-LABEL: func.func @main(
// HW-NOT: "nn.
// HW-COUNT-9: "hw.launch"
// HW-NOT: "hw.launch"
// HW: return

// EMULATED: check res0 (tensor<100x130xf32>): {{.*}}: ok
// EMULATED: check res1 (tensor<1x200xf32>): {{.*}}: ok
// EMULATED: check res2 (tensor<64x1xf32>): {{.*}}: ok
// EMULATED: check res3 (tensor<40x24xf32>): {{.*}}: ok
// EMULATED: check res4 (tensor<70x60xf32>): {{.*}}: ok
// EMULATED: check res5 (tensor<33x24xf32>): {{.*}}: ok
// EMULATED: check res6 (tensor<33x24xf32>): {{.*}}: ok
// EMULATED: check res7 (tensor<2x30x25xf32>): {{.*}}: ok
// EMULATED: check res8 (tensor<2x17x24xf32>): {{.*}}: ok
// EMULATED: check: all results match the reference

// HALF: check res0 (tensor<65x72xf16>): {{.*}}: ok
// HALF: check res1 (tensor<65x40xbf16>): {{.*}}: ok
// HALF: check res2 (tensor<80x56xf16>): {{.*}}: ok
// HALF: check res3 (tensor<3x5x33x40xf16>): {{.*}}: ok
// HALF: check res4 (tensor<3x50x70xf16>): {{.*}}: ok
// HALF: check: all results match the reference

// CPU: check res0 (tensor<70x60xf32>): {{.*}}: MISMATCH
// CPU: check: FAILED

// CONTRACT: allowed_matmul_0: registers <= 255, no spills, no stack frame
// CONTRACT-COUNT-5: half_matmul_{{[0-9]+}}: registers <= 255, no spills, no stack frame
// CONTRACT-COUNT-9: main_matmul_{{[0-9]+}}: registers <= 255, no spills, no stack frame
// CONTRACT-NOT: matmul

// LARGE: main_matmul_0: registers <= 255, no spills, no stack frame
// LARGE-NEXT: main_matmul_1: registers <= 255, no spills, no stack frame
// LARGE-NEXT: main_matmul_2: registers <= 255, no spills, no stack frame
// LARGE-NEXT: main_matmul_3: registers <= 255, no spills, no stack frame
// LARGE-NOT: main_matmul

func.func @main(%a0: tensor<100x75xf32>, %b0: tensor<75x130xf32>, %bias0: tensor<130xf32>,
                %a1: tensor<1x64xf32>, %b1: tensor<64x200xf32>, %r1: tensor<1x200xf32>,
                %a2: tensor<64x48xf32>, %b2: tensor<48x1xf32>,
                %a3: tensor<40x0xf32>, %b3: tensor<0x24xf32>, %bias3: tensor<24xf32>,
                %a4: tensor<70x90xf32>, %b4: tensor<90x60xf32>,
                %x5: tensor<33x40xf32>, %w5: tensor<24x40xf32>, %bias5: tensor<24xf32>,
                %x6: tensor<40x33xf32>, %b6: tensor<40x24xf32>,
                %a7: tensor<2x30x20xf32>, %w7: tensor<2x25x20xf32>,
                %x8: tensor<2x17x40xf32>, %w8: tensor<24x40xf32>, %bias8: tensor<24xf32>,
                %r8: tensor<2x17x24xf32>)
    -> (tensor<100x130xf32>, tensor<1x200xf32>, tensor<64x1xf32>, tensor<40x24xf32>,
        tensor<70x60xf32>, tensor<33x24xf32>, tensor<33x24xf32>, tensor<2x30x25xf32>,
        tensor<2x17x24xf32>) {
  %m0 = "nn.matmul"(%a0, %b0) : (tensor<100x75xf32>, tensor<75x130xf32>) -> tensor<100x130xf32>
  %s0 = "nn.add"(%m0, %bias0) : (tensor<100x130xf32>, tensor<130xf32>) -> tensor<100x130xf32>
  %o0 = "nn.gelu"(%s0) : (tensor<100x130xf32>) -> tensor<100x130xf32>
  %m1 = "nn.matmul"(%a1, %b1) : (tensor<1x64xf32>, tensor<64x200xf32>) -> tensor<1x200xf32>
  %s1 = "nn.add"(%m1, %r1) : (tensor<1x200xf32>, tensor<1x200xf32>) -> tensor<1x200xf32>
  %o1 = "nn.relu"(%s1) : (tensor<1x200xf32>) -> tensor<1x200xf32>
  %o2 = "nn.matmul"(%a2, %b2) : (tensor<64x48xf32>, tensor<48x1xf32>) -> tensor<64x1xf32>
  %m3 = "nn.matmul"(%a3, %b3) : (tensor<40x0xf32>, tensor<0x24xf32>) -> tensor<40x24xf32>
  %s3 = "nn.add"(%m3, %bias3) : (tensor<40x24xf32>, tensor<24xf32>) -> tensor<40x24xf32>
  %o3 = "nn.relu"(%s3) : (tensor<40x24xf32>) -> tensor<40x24xf32>
  %o4 = "nn.matmul"(%a4, %b4) {precision = "tf32"} : (tensor<70x90xf32>, tensor<90x60xf32>) -> tensor<70x60xf32>
  %t5 = "nn.transpose"(%w5) {perm = array<i64: 1, 0>} : (tensor<24x40xf32>) -> tensor<40x24xf32>
  %m5 = "nn.matmul"(%x5, %t5) : (tensor<33x40xf32>, tensor<40x24xf32>) -> tensor<33x24xf32>
  %s5 = "nn.add"(%m5, %bias5) : (tensor<33x24xf32>, tensor<24xf32>) -> tensor<33x24xf32>
  %o5 = "nn.relu"(%s5) : (tensor<33x24xf32>) -> tensor<33x24xf32>
  %t6 = "nn.transpose"(%x6) {perm = array<i64: 1, 0>} : (tensor<40x33xf32>) -> tensor<33x40xf32>
  %o6 = "nn.matmul"(%t6, %b6) : (tensor<33x40xf32>, tensor<40x24xf32>) -> tensor<33x24xf32>
  %t7 = "nn.transpose"(%w7) {perm = array<i64: 0, 2, 1>} : (tensor<2x25x20xf32>) -> tensor<2x20x25xf32>
  %o7 = "nn.matmul"(%a7, %t7) : (tensor<2x30x20xf32>, tensor<2x20x25xf32>) -> tensor<2x30x25xf32>
  %t8 = "nn.transpose"(%w8) {perm = array<i64: 1, 0>} : (tensor<24x40xf32>) -> tensor<40x24xf32>
  %m8 = "nn.matmul"(%x8, %t8) : (tensor<2x17x40xf32>, tensor<40x24xf32>) -> tensor<2x17x24xf32>
  %s8 = "nn.add"(%m8, %bias8) : (tensor<2x17x24xf32>, tensor<24xf32>) -> tensor<2x17x24xf32>
  %q8 = "nn.add"(%s8, %r8) : (tensor<2x17x24xf32>, tensor<2x17x24xf32>) -> tensor<2x17x24xf32>
  %o8 = "nn.gelu"(%q8) : (tensor<2x17x24xf32>) -> tensor<2x17x24xf32>
  return %o0, %o1, %o2, %o3, %o4, %o5, %o6, %o7, %o8 : tensor<100x130xf32>, tensor<1x200xf32>, tensor<64x1xf32>, tensor<40x24xf32>, tensor<70x60xf32>, tensor<33x24xf32>, tensor<33x24xf32>, tensor<2x30x25xf32>, tensor<2x17x24xf32>
}

func.func @half(%x0: tensor<65x48xf16>, %w0: tensor<72x48xf16>, %bias0: tensor<72xf16>,
                %x1: tensor<48x65xbf16>, %b1: tensor<48x40xbf16>,
                %x2: tensor<32x80xf16>, %w2: tensor<56x32xf16>,
                %x3: tensor<3x5x33x48xf16>, %b3: tensor<48x40xf16>,
                %a4: tensor<3x50x40xf32>, %b4: tensor<3x40x70xf32>)
    -> (tensor<65x72xf16>, tensor<65x40xbf16>, tensor<80x56xf16>, tensor<3x5x33x40xf16>,
        tensor<3x50x70xf16>) {
  %t0 = "nn.transpose"(%w0) {perm = array<i64: 1, 0>} : (tensor<72x48xf16>) -> tensor<48x72xf16>
  %m0 = "nn.matmul"(%x0, %t0) : (tensor<65x48xf16>, tensor<48x72xf16>) -> tensor<65x72xf16>
  %o0 = "nn.add"(%m0, %bias0) : (tensor<65x72xf16>, tensor<72xf16>) -> tensor<65x72xf16>
  %t1 = "nn.transpose"(%x1) {perm = array<i64: 1, 0>} : (tensor<48x65xbf16>) -> tensor<65x48xbf16>
  %o1 = "nn.matmul"(%t1, %b1) : (tensor<65x48xbf16>, tensor<48x40xbf16>) -> tensor<65x40xbf16>
  %ta2 = "nn.transpose"(%x2) {perm = array<i64: 1, 0>} : (tensor<32x80xf16>) -> tensor<80x32xf16>
  %tb2 = "nn.transpose"(%w2) {perm = array<i64: 1, 0>} : (tensor<56x32xf16>) -> tensor<32x56xf16>
  %o2 = "nn.matmul"(%ta2, %tb2) : (tensor<80x32xf16>, tensor<32x56xf16>) -> tensor<80x56xf16>
  %o3 = "nn.matmul"(%x3, %b3) : (tensor<3x5x33x48xf16>, tensor<48x40xf16>) -> tensor<3x5x33x40xf16>
  %m4 = "nn.matmul"(%a4, %b4) : (tensor<3x50x40xf32>, tensor<3x40x70xf32>) -> tensor<3x50x70xf32>
  %o4 = "nn.cast"(%m4) : (tensor<3x50x70xf32>) -> tensor<3x50x70xf16>
  return %o0, %o1, %o2, %o3, %o4 : tensor<65x72xf16>, tensor<65x40xbf16>, tensor<80x56xf16>, tensor<3x5x33x40xf16>, tensor<3x50x70xf16>
}

func.func @allowed(%a: tensor<70x90xf32>, %b: tensor<90x60xf32>) -> tensor<70x60xf32> {
  %0 = "nn.matmul"(%a, %b) {precision = "tf32"} : (tensor<70x90xf32>, tensor<90x60xf32>) -> tensor<70x60xf32>
  return %0 : tensor<70x60xf32>
}
