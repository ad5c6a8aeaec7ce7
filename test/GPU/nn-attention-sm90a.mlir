// RUN: lamina-compile %s --target=cuda:sm_90a --emit=hw | FileCheck %s --check-prefix=HW90
// RUN: lamina-compile %s --target=cuda:sm_80 --emit=hw | FileCheck %s --check-prefix=HW80
// RUN: lamina-compile %s --target=cuda:sm_90a --emit=ptx | FileCheck %s --check-prefix=PTX
// RUN: lamina-run %s --target=cuda:sm_90a --emulate --random --seed 5 --check -q | FileCheck %s --check-prefix=EMULATED
// RUN: %if ptxas %{ lamina-compile %s --target=cuda:sm_90a --emit=manifest | %PYTHON %S/Inputs/no-spills.py | FileCheck %s --check-prefix=CONTRACT %}
// RUN: lamina-compile %s --target=cuda:sm_90a --emit=ptx -o %t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}

// The sm_90a flash-attention kernel of f16 and bf16 attention: Q, K and V
// loaded by TMA on mbarriers into 128-byte swizzled tiles, K and V in a
// ring of stages (here three: 300 keys are five steps of 64, so the ring
// wraps and the mbarriers' parity flips), S = Q K^T as wgmma with K read
// K-major from shared memory, O += P V as wgmma with P from registers
// and V read MN-major; one warpgroup per 64 query rows. Emulated (after
// hw-check and the hazard checker) against the nn reference at the
// result type's tolerance (f16: rtol 1e-2, atol 2e-3 of the largest
// value; bf16: 4e-2 and 2e-2): f16 and bf16, causal or not, a mask
// broadcast over the batch, D = 32, 64 and 128, Dv = 40 (padded to a
// swizzled box), sizes no tile divides (150 and 70 queries, 300, 200 and
// 130 keys). Head dims whose rows TMA cannot move (20 f16: 40 bytes) keep
// the cp.async + mma.sync kernel, as sm_80 does for all of them; ptxas
// accepts every kernel with no spills and no stack, and runs its wgmmas
// back to back: no fence of its own between them (every register A is
// made before the first), none serialised.

// HW90-LABEL: func.func private @main_attention_0(
// HW90-SAME: memref<6x150x64xf16>, %{{.+}}: memref<6x300x64xf16>, %{{.+}}: memref<6x300x64xf16>, %{{.+}}: memref<2x3x150x64xf16>
// HW90: %[[QBAR:.+]] = "hw.mbarrier_init"() : () -> !hw.mbarrier
// HW90: %[[KVBAR:.+]] = "hw.mbarrier_init"() {barriers = 3 : i64, count = 2 : i64}
// HW90: %[[Q:.+]] = "hw.alloc"() : () -> memref<64x64xf16, #gpu.address_space<workgroup>>
// HW90: %[[K:.+]] = "hw.alloc"() : () -> memref<3x64x64xf16, #gpu.address_space<workgroup>>
// HW90: %[[V:.+]] = "hw.alloc"() : () -> memref<3x64x64xf16, #gpu.address_space<workgroup>>
// HW90: "hw.tma_load"(%{{.+}}, %[[Q]], %[[QBAR]],
// HW90: "hw.tma_load"(%{{.+}}, %[[K]], %[[KVBAR]],
// HW90: "hw.tma_load"(%{{.+}}, %[[V]], %[[KVBAR]],
// HW90: "hw.mbarrier_wait"(%[[QBAR]],
// HW90: scf.for
// HW90: "hw.tma_load"(%{{.+}}, %[[K]], %[[KVBAR]], %[[NEXT:[^,]+]],
// HW90: "hw.mbarrier_wait"(%[[KVBAR]], %[[SLOT:[^,]+]], %{{[^,]+}})
// HW90: "hw.contract"(%[[Q]], %[[K]], %{{.+}}, %[[SLOT]]) {transpose_b = true}
// HW90: "hw.contract"(%{{.+}}, %[[V]], %{{.+}}, %[[SLOT]]) : (memref<64x64xf16, #gpu.address_space<private>>
// HW90-NOT: hw.async_copy
// HW90-LABEL: func.func private @main_attention_1(
// HW90: "hw.contract"({{.+}}) {transpose_b = true} : (memref<64x128xbf16, #gpu.address_space<workgroup>>, memref<3x64x128xbf16
// HW90: "hw.contract"({{.+}}) : (memref<64x64xbf16, #gpu.address_space<private>>, memref<3x64x128xbf16, #gpu.address_space<workgroup>>, memref<64x128xf32
// HW90-LABEL: func.func private @main_attention_2(
// HW90: "hw.tma_load"
// HW90: "hw.async_copy"(%{{.+}}) : (memref<1x70x130xf16>
// HW90: "hw.wait"
// HW90: "hw.contract"
// HW90-LABEL: func.func private @main_attention_3(
// HW90-NOT: hw.tma_load
// HW90: "hw.async_copy"
// HW90: "hw.contract"

// HW80-LABEL: func.func private @main_attention_0(
// HW80-NOT: hw.tma_load
// HW80-NOT: hw.mbarrier
// HW80: "hw.async_copy"
// HW80: "hw.wait"
// HW80: "hw.contract"
// HW80-LABEL: func.func private @main_attention_1(
// HW80-NOT: hw.tma_load

// PTX: .target sm_90a
// PTX-LABEL: .entry main_attention_0(
// PTX-NOT: mma.sync
// PTX-NOT: ldmatrix
// PTX: cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// PTX: mbarrier.try_wait.parity.shared.b64
// PTX: wgmma.fence.sync.aligned;
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{[{].+[}]}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1, 1, 0, 0;
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{[{].+[}]}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1, 1;
// PTX: wgmma.commit_group.sync.aligned;
// PTX: wgmma.wait_group.sync.aligned 0;
// PTX-NOT: mma.sync
// PTX-NOT: ldmatrix
// PTX-LABEL: .entry main_attention_1(
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{[{].+[}]}}, %rd{{[0-9]+}}, %rd{{[0-9]+}}, p, 1, 1, 0, 0;
// PTX-DAG: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{[{].+[}]}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1, 1;
// PTX-LABEL: .entry main_attention_3(
// PTX-NOT: wgmma
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32

// PTXAS-NOT: warpgroup.arrive is injected
// PTXAS-NOT: serialized
// PTXAS: Compiling entry function 'main_attention_0' for 'sm_90a'
// PTXAS-NOT: warpgroup.arrive is injected
// PTXAS-NOT: serialized

// EMULATED-NOT: MISMATCH
// EMULATED: check: all results match the reference

// CONTRACT-NOT: BROKEN
// CONTRACT: main_attention_0: registers <= 255, no spills, no stack frame
// CONTRACT: main_attention_1: registers <= 255, no spills, no stack frame
// CONTRACT: main_attention_2: registers <= 255, no spills, no stack frame
// CONTRACT: main_attention_3: registers <= 255, no spills, no stack frame
// CONTRACT-NOT: BROKEN

func.func @main(%q: tensor<2x3x150x64xf16>, %k: tensor<2x3x300x64xf16>, %v: tensor<2x3x300x64xf16>,
                %bq: tensor<2x200x128xbf16>, %bk: tensor<2x200x128xbf16>, %bv: tensor<2x200x128xbf16>,
                %mq: tensor<2x70x32xf16>, %mk: tensor<2x130x32xf16>, %mv: tensor<2x130x40xf16>, %m: tensor<1x70x130xf16>,
                %nq: tensor<40x20xf16>, %nk: tensor<50x20xf16>, %nv: tensor<50x20xf16>)
    -> (tensor<2x3x150x64xf16>, tensor<2x200x128xbf16>, tensor<2x70x40xf16>, tensor<40x20xf16>) {
  %0 = "nn.attention"(%q, %k, %v) : (tensor<2x3x150x64xf16>, tensor<2x3x300x64xf16>, tensor<2x3x300x64xf16>) -> tensor<2x3x150x64xf16>
  %1 = "nn.attention"(%bq, %bk, %bv) {causal = true} : (tensor<2x200x128xbf16>, tensor<2x200x128xbf16>, tensor<2x200x128xbf16>) -> tensor<2x200x128xbf16>
  %2 = "nn.attention"(%mq, %mk, %mv, %m) {scale = 0.3 : f64} : (tensor<2x70x32xf16>, tensor<2x130x32xf16>, tensor<2x130x40xf16>, tensor<1x70x130xf16>) -> tensor<2x70x40xf16>
  %3 = "nn.attention"(%nq, %nk, %nv) {causal = true} : (tensor<40x20xf16>, tensor<50x20xf16>, tensor<50x20xf16>) -> tensor<40x20xf16>
  return %0, %1, %2, %3 : tensor<2x3x150x64xf16>, tensor<2x200x128xbf16>, tensor<2x70x40xf16>, tensor<40x20xf16>
}
