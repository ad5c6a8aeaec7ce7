// RUN: lamina-compile %s --target=cuda:sm_80 --emit=ptx | FileCheck %s --check-prefix=SM80
// RUN: lamina-compile %s --target=cuda:sm_90a --emit=ptx | FileCheck %s --check-prefix=SM90
// RUN: %if ptxas %{ lamina-compile %s --target=cuda:sm_80 --emit=manifest | %PYTHON %S/Inputs/no-spills.py | FileCheck %s --check-prefix=CONTRACT %}
// RUN: %if ptxas %{ lamina-compile %s --target=cuda:sm_90a --emit=manifest | %PYTHON %S/Inputs/no-spills.py | FileCheck %s --check-prefix=CONTRACT %}
// RUN: lamina-run %s --target=cuda:sm_80 --emulate --random --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-run %s --target=cuda:sm_90a --emulate --random --seed 2 --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-compile %s --target=cuda:sm_80 --emit=hw | FileCheck %s --check-prefix=HW
// RUN: lamina-run %S/Inputs/matmul-residual-gelu-tanh-bf16.mlir --target=cuda:sm_90a --emulate --random --check -q | FileCheck %s --check-prefix=TANH

// The fused matmul + bias + gelu of f16 (exact gelu, with erf) of shapes
// that are not powers of two: the epilogue computes gelu in f32 with arith
// ops only (a rational approximation of erf), so the PTX calls no
// libdevice function and ptxas accepts it with no spills. Its products and
// sums may contract into FMAs and its division is approximate (2 ulp,
// under the f16 rounding that follows): Horner steps are fma.rn.f32, the
// quotient div.approx.f32, not IEEE division's slow path; emulated, it
// matches the nn program's NumPy reference, and so does a bf16 matmul with
// a residual and gelu's tanh approximation.

// HW-LABEL: func.func private @main_matmul_0_epilogue
// HW: arith.addf %{{.+}}, %{{.+}} fastmath<contract> : f32
// HW: arith.minimumf
// HW: arith.mulf %{{.+}}, %{{.+}} fastmath<contract> : f32
// HW: arith.divf %{{.+}}, %{{.+}} fastmath<arcp,contract,afn> : f32
// HW-NOT: math.erf

// SM80: .target sm_80
// SM80-LABEL: .entry main_matmul_0(
// SM80: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// SM80: fma.rn.f32
// SM80: div.approx.f32
// SM80-NOT: div.rn.f32
// SM80-NOT: __nv_

// SM90: .target sm_90a
// SM90-LABEL: .entry main_matmul_0(
// SM90: wgmma.mma_async
// SM90: fma.rn.f32
// SM90: div.approx.f32
// SM90-NOT: div.rn.f32
// SM90-NOT: __nv_

// CONTRACT: main_matmul_0: registers <= 255, no spills, no stack frame

// EMULATED: check res0 (tensor<96x200xf16>): {{.*}}: ok
// EMULATED: check: all results match the reference

// TANH: check res0 (tensor<72x136xbf16>): {{.*}}: ok

func.func @main(%a: tensor<96x136xf16>, %b: tensor<136x200xf16>, %bias: tensor<200xf16>) -> tensor<96x200xf16> {
  %0 = "nn.matmul"(%a, %b) : (tensor<96x136xf16>, tensor<136x200xf16>) -> tensor<96x200xf16>
  %1 = "nn.add"(%0, %bias) : (tensor<96x200xf16>, tensor<200xf16>) -> tensor<96x200xf16>
  %2 = "nn.gelu"(%1) : (tensor<96x200xf16>) -> tensor<96x200xf16>
  return %2 : tensor<96x200xf16>
}
