// RUN: lamina-compile %s --target=cuda:sm_80 --emit=ptx | FileCheck %s --check-prefix=PTX
// RUN: lamina-compile %s --target=cuda:sm_80 --emit=hw | FileCheck %s --check-prefix=HW
// RUN: lamina-run %s --target=cuda:sm_90a --emulate --random --check --rtol 0.02 --atol 0.02 -q | FileCheck %s --check-prefix=EMULATED

// A bf16 matmul + bias + relu cast to f32: the cast joins the epilogue,
// which rounds the f32 accumulator to bf16 once (the nn ops' type) and
// stores f32, two adjacent columns per 8-byte store. The reference rounds after each nn op, so results differ by
// about one bf16 rounding: the check states bf16-sized tolerances.

// HW-LABEL: func.func private @main_matmul_0_epilogue(%{{.+}}: f32, %{{.+}}: bf16) -> f32
// HW: arith.maximumf
// HW: arith.truncf %{{.+}} : f32 to bf16
// HW: arith.extf %{{.+}} : bf16 to f32
// HW-LABEL: func.func private @main_matmul_0(
// HW-SAME: memref<100x72xf32>

// PTX-LABEL: .entry main_matmul_0(
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX: cvt.rn.bf16.f32
// PTX: st.global.v2.b32

// EMULATED: check res0 (tensor<100x72xf32>): {{.*}}: ok

func.func @main(%a: tensor<100x64xbf16>, %b: tensor<64x72xbf16>, %bias: tensor<72xbf16>) -> tensor<100x72xf32> {
  %0 = "nn.matmul"(%a, %b) : (tensor<100x64xbf16>, tensor<64x72xbf16>) -> tensor<100x72xbf16>
  %1 = "nn.add"(%0, %bias) : (tensor<100x72xbf16>, tensor<72xbf16>) -> tensor<100x72xbf16>
  %2 = "nn.relu"(%1) : (tensor<100x72xbf16>) -> tensor<100x72xbf16>
  %3 = "nn.cast"(%2) : (tensor<100x72xbf16>) -> tensor<100x72xf32>
  return %3 : tensor<100x72xf32>
}
