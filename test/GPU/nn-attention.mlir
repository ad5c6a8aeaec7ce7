// RUN: lamina-run %s --target=cuda:sm_80 --emulate --random --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-run %s --target=cuda:sm_90a --emulate --random --seed 3 --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-run %S/Inputs/attention-heads.mlir --target=cuda:sm_80 --emulate --random --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: %PYTHON %S/Inputs/attention-hidden-keys.py %t.npz
// RUN: lamina-run %S/Inputs/attention-hidden-keys.mlir --target=cuda:sm_80 --emulate --inputs %t.npz --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-run %S/Inputs/attention-hidden-keys.mlir --target=cuda:sm_90a --emulate --inputs %t.npz --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: lamina-compile %s --target=cuda:sm_80 --emit=ptx | FileCheck %s --check-prefix=PTX
// RUN: %if ptxas %{ lamina-compile %s --target=cuda:sm_80 --emit=manifest | %PYTHON %S/Inputs/no-spills.py | FileCheck %s --check-prefix=CONTRACT %}
// RUN: %if ptxas %{ lamina-compile %s --target=cuda:sm_90a --emit=manifest | %PYTHON %S/Inputs/no-spills.py | FileCheck %s --check-prefix=CONTRACT %}
// RUN: %if ptxas %{ lamina-compile %S/Inputs/attention-heads.mlir --target=cuda:sm_80 --emit=manifest | %PYTHON %S/Inputs/no-spills.py | FileCheck %s --check-prefix=CONTRACT %}
// RUN: %if ptxas %{ lamina-compile %S/Inputs/attention-heads.mlir --target=cuda:sm_90a --emit=manifest | %PYTHON %S/Inputs/no-spills.py | FileCheck %s --check-prefix=CONTRACT %}
// RUN: %if ptxas %{ lamina-compile %S/Inputs/attention-hidden-keys.mlir --target=cuda:sm_80 --emit=manifest | %PYTHON %S/Inputs/no-spills.py | FileCheck %s --check-prefix=CONTRACT %}
// RUN: %if ptxas %{ lamina-compile %S/Inputs/attention-hidden-keys.mlir --target=cuda:sm_90a --emit=manifest | %PYTHON %S/Inputs/no-spills.py | FileCheck %s --check-prefix=CONTRACT %}
// RUN: %if ptxas %{ lamina-compile %S/Inputs/attention-long.mlir --target=cuda:sm_80 --emit=manifest | %PYTHON %S/Inputs/no-spills.py | FileCheck %s --check-prefix=CONTRACT %}
// RUN: %if ptxas %{ lamina-compile %S/Inputs/attention-long.mlir --target=cuda:sm_90a --emit=manifest | %PYTHON %S/Inputs/no-spills.py | FileCheck %s --check-prefix=CONTRACT %}

// nn.attention as flash-attention kernels, emulated (each kernel passes
// hw-check and the hazard checker first) against the nn program's NumPy
// reference at the result type's tolerance (f16: rtol 1e-2, atol 2e-3 of
// the largest value; bf16: 4e-2 and 2e-2; f32: 1e-4 and 1e-5; the f32
// NumPy reference computes P unrounded, the f16 and bf16 kernels round P
// to the inputs' type for P V): f16, bf16 and f32, causal or not, with
// masks (broadcast over the batch, hiding every key of some queries,
// which give 0), 1, 37 and 128 queries, head dims 16, 37 (padded), 64
// and 128, Dv != D, Sq != Sk, GPT- and Llama-sized heads (and, compiled
// only, sequences of 512 to 2048 tokens). On the GPU the
// scores are mma.sync products, their rows folded by shuffles, exp is
// ex2.approx, and ptxas accepts every kernel with no spills for sm_80 and
// sm_90a at the default tiles.

// EMULATED-NOT: MISMATCH
// EMULATED: check: all results match the reference

// PTX: .target sm_80
// PTX-LABEL: .entry main_attention_0(
// PTX: cp.async
// PTX: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTX: shfl.sync.bfly.b32
// PTX: ex2.approx
// PTX: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// PTX-LABEL: .entry main_attention_2(
// PTX-NOT: mma.sync
// PTX: fma.rn.f32
// PTX-NOT: mma.sync
// PTX-LABEL: .entry main_attention_3(
// PTX-NOT: __nv_

// CONTRACT-NOT: BROKEN
// CONTRACT: main_attention_0: registers <= 255, no spills, no stack frame
// CONTRACT: main_attention_1: registers <= 255, no spills, no stack frame
// CONTRACT-NOT: BROKEN

func.func @main(%q: tensor<2x3x37x64xf16>, %k: tensor<2x3x37x64xf16>, %v: tensor<2x3x37x64xf16>,
                %bq: tensor<3x37x64xbf16>, %bk: tensor<3x100x64xbf16>, %bv: tensor<3x100x48xbf16>, %bm: tensor<37x100xbf16>,
                %fq: tensor<1x4x16x16xf32>, %fk: tensor<1x4x16x16xf32>, %fv: tensor<1x4x16x16xf32>,
                %sq: tensor<2x1x16xf16>, %sk: tensor<2x1x16xf16>, %sv: tensor<2x1x16xf16>,
                %nq: tensor<37x37xf16>, %nk: tensor<100x37xf16>, %nv: tensor<100x21xf16>,
                %gq: tensor<128x37xf32>, %gk: tensor<128x37xf32>, %gv: tensor<128x20xf32>, %gm: tensor<128x128xf32>)
    -> (tensor<2x3x37x64xf16>, tensor<3x37x48xbf16>, tensor<1x4x16x16xf32>, tensor<2x1x16xf16>, tensor<37x21xf16>, tensor<128x20xf32>) {
  %0 = "nn.attention"(%q, %k, %v) {causal = true} : (tensor<2x3x37x64xf16>, tensor<2x3x37x64xf16>, tensor<2x3x37x64xf16>) -> tensor<2x3x37x64xf16>
  %1 = "nn.attention"(%bq, %bk, %bv, %bm) {scale = 0.2 : f64} : (tensor<3x37x64xbf16>, tensor<3x100x64xbf16>, tensor<3x100x48xbf16>, tensor<37x100xbf16>) -> tensor<3x37x48xbf16>
  %2 = "nn.attention"(%fq, %fk, %fv) {causal = true} : (tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  %3 = "nn.attention"(%sq, %sk, %sv) : (tensor<2x1x16xf16>, tensor<2x1x16xf16>, tensor<2x1x16xf16>) -> tensor<2x1x16xf16>
  %4 = "nn.attention"(%nq, %nk, %nv) {causal = true} : (tensor<37x37xf16>, tensor<100x37xf16>, tensor<100x21xf16>) -> tensor<37x21xf16>
  %5 = "nn.attention"(%gq, %gk, %gv, %gm) : (tensor<128x37xf32>, tensor<128x37xf32>, tensor<128x20xf32>, tensor<128x128xf32>) -> tensor<128x20xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<2x3x37x64xf16>, tensor<3x37x48xbf16>, tensor<1x4x16x16xf32>, tensor<2x1x16xf16>, tensor<37x21xf16>, tensor<128x20xf32>
}
