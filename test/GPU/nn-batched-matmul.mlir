// RUN: lamina-compile %s --target=cuda:sm_80 --emit=ptx | FileCheck %s --check-prefix=PTX
// RUN: lamina-compile %s --target=cuda:sm_90a --emit=ptx | FileCheck %s --check-prefix=SM90
// RUN: lamina-compile %s --target=cuda:sm_90a --emit=manifest | FileCheck %s --check-prefix=MANIFEST
// RUN: %if ptxas %{ lamina-compile %s --target=cuda:sm_90a --emit=manifest | %PYTHON %S/Inputs/no-spills.py | FileCheck %s --check-prefix=CONTRACT %}
// RUN: lamina-run %s --target=cuda:sm_90a --emulate --random --check -q | FileCheck %s --check-prefix=EMULATED

// A batched f16 matmul (3 x 72x40 by 40x136) with a bias and gelu: the batch
// runs along the grid's z; on sm_80 cp.async loads feed mma.sync, on sm_90a
// 3-d TMA loads (boxes 1 deep in the batch) feed wgmma; ptxas accepts the
// kernel with no spills and, emulated, it matches the nn program's NumPy
// reference.

// PTX-LABEL: .entry main_matmul_0(
// PTX: mov.u32 %r{{[0-9]+}}, %ctaid.z;
// PTX: cp.async.cg.shared.global
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32

// MANIFEST: "grid": [
// MANIFEST-NEXT: 2,
// MANIFEST-NEXT: 3,
// MANIFEST-NEXT: 3
// MANIFEST: "TMA descriptor of argument #0 (1x64x64 boxes, swizzled)",
// MANIFEST: "tma_descriptors": [
// MANIFEST-NEXT: {
// MANIFEST-NEXT: "argument": 0,
// MANIFEST-NEXT: "box": [
// MANIFEST-NEXT: 1,
// MANIFEST-NEXT: 64,
// MANIFEST-NEXT: 64

// SM90-LABEL: .entry main_matmul_0(
// SM90: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// SM90: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16

// CONTRACT: main_matmul_0: registers <= 255, no spills, no stack frame

// EMULATED: check res0 (tensor<3x72x136xf16>): {{.*}}: ok

func.func @main(%a: tensor<3x72x40xf16>, %b: tensor<3x40x136xf16>, %bias: tensor<136xf16>) -> tensor<3x72x136xf16> {
  %0 = "nn.matmul"(%a, %b) : (tensor<3x72x40xf16>, tensor<3x40x136xf16>) -> tensor<3x72x136xf16>
  %1 = "nn.add"(%0, %bias) : (tensor<3x72x136xf16>, tensor<136xf16>) -> tensor<3x72x136xf16>
  %2 = "nn.gelu"(%1) : (tensor<3x72x136xf16>) -> tensor<3x72x136xf16>
  return %2 : tensor<3x72x136xf16>
}
