// RUN: lamina-opt %s --split-input-file --convert-nn-to-hw="chip=sm_80 keep-unconverted" | FileCheck %s
// RUN: not lamina-opt %s --split-input-file --convert-nn-to-hw=chip=sm_80 2>&1 | FileCheck %s --check-prefix=ERROR

// An f16 attention whose sizes no tile divides (37 queries, 100 keys) is
// one flash-attention kernel: a block per 64 queries of each of the 2x3
// heads, the Q tile loaded once, then per 64 keys the K and V tiles in two
// async copy groups, the scores S = Q K^T on tensor cores (K read as
// stored, transposed) in registers whose four warps hold whole rows, the
// keys past 100 hidden, the online softmax (row maxima, exp, row sums, the
// accumulator rescaled) and O += P V with P from its registers; O / l
// stored once. The kernel asks for registers for one block per SM (ptxas
// then allocates what the tiles need, with no spills).
// CHECK-LABEL: func.func @attention_f16
// CHECK: "hw.launch"(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) {block = array<i64: 128>, grid = array<i64: 1, 6>, kernel = @attention_f16_attention_0}
// CHECK-NOT: "nn.attention"
// CHECK-LABEL: func.func private @attention_f16_attention_0
// CHECK-SAME: (%[[Q:.+]]: memref<2x3x37x64xf16>, %[[K:.+]]: memref<2x3x100x64xf16>, %[[V:.+]]: memref<2x3x100x64xf16>, %[[O:.+]]: memref<2x3x37x64xf16>) attributes {hw.kernel, hw.min_blocks_per_sm = 1 : i64}
// CHECK-DAG: %[[QS:.+]] = "hw.alloc"() : () -> memref<64x64xf16, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[S:.+]] = "hw.alloc"() {warps = array<i64: 4, 1>} : () -> memref<64x64xf32, #gpu.address_space<private>>
// CHECK-DAG: %[[P:.+]] = "hw.alloc"() {warps = array<i64: 4, 1>} : () -> memref<64x64xf16, #gpu.address_space<private>>
// CHECK-DAG: %[[PEAK:.+]] = "hw.alloc"() {warps = array<i64: 4, 1>} : () -> memref<64x1xf32, #gpu.address_space<private>>
// CHECK: "hw.fill"(%[[PEAK]]) {value = -3.4028234663852886E+38 : f64}
// CHECK: %[[HEAD:.+]] = "hw.block_id"() {dim = 1 : i64}
// CHECK: %[[ROW:.+]] = arith.muli
// CHECK: "hw.async_copy"(%[[Q]], %[[QS]], %{{.+}}, %{{.+}}, %[[ROW]], %{{.+}})
// CHECK: scf.for %[[KV:.+]] = %{{.+}} to %c128 step %c64{{.*}} {
// CHECK: "hw.async_copy"(%[[K]], %[[KS:.+]], %{{.+}}, %{{.+}}, %[[KV]], %{{.+}})
// CHECK: "hw.commit"
// CHECK: "hw.async_copy"(%[[V]], %[[VS:.+]], %{{.+}}, %{{.+}}, %[[KV]], %{{.+}})
// CHECK: "hw.commit"
// CHECK: "hw.wait"() {pending = 1 : i64}
// CHECK: "hw.contract"(%[[QS]], %[[KS]], %[[S]]) {transpose_b = true}
// CHECK: "hw.mask"(%[[S]], %[[ROW]], %[[KV]]) {keys = 100 : i64}
// CHECK: "hw.reduce_max"(%[[S]], %[[NEW:.+]]) :
// CHECK: "hw.max"(%[[NEW]], %[[PEAK]], %[[NEW]])
// CHECK: "hw.exp"(%[[S]], %[[S]])
// CHECK: "hw.reduce_sum"(%[[S]],
// CHECK: "hw.cast"(%[[S]], %[[P]])
// CHECK: "hw.wait"() : () -> ()
// CHECK: "hw.contract"(%[[P]], %[[VS]], %[[ACC:.+]]) :
// CHECK: "hw.barrier"
// CHECK: "hw.elementwise"(%[[ACC]], %{{.+}}, %[[ACC]]) {fn = "nn.div"}
// CHECK: "hw.store"(%[[ACC]], %[[O]], %{{.+}}, %{{.+}}, %[[ROW]], %{{.+}})
func.func @attention_f16(%q: tensor<2x3x37x64xf16>, %k: tensor<2x3x100x64xf16>, %v: tensor<2x3x100x64xf16>) -> tensor<2x3x37x64xf16> {
  %o = "nn.attention"(%q, %k, %v) : (tensor<2x3x37x64xf16>, tensor<2x3x100x64xf16>, tensor<2x3x100x64xf16>) -> tensor<2x3x37x64xf16>
  return %o : tensor<2x3x37x64xf16>
}

// -----

// Causal: the loop over the keys stops at the block's last query (the
// tiles past the diagonal are skipped), and the mask hides the keys after
// each query in the tiles that have such keys or keys past the end; bf16,
// a rank-3 batch.
// CHECK-LABEL: func.func private @causal_bf16_attention_0
// CHECK: %[[ROW:.+]] = arith.muli %{{.+}}, %c64 : index
// CHECK: %[[LAST:.+]] = arith.addi %[[ROW]], %c64{{.*}} : index
// CHECK: %[[KEYS:.+]] = arith.minui %[[LAST]], %c200 : index
// CHECK: %[[END:.+]] = arith.muli
// CHECK: scf.for %[[KV:.+]] = %{{.+}} to %[[END]] step
// CHECK: %[[AFTER:.+]] = arith.cmpi ugt, %{{.+}}, %[[ROW]] : index
// CHECK: %[[HIDE:.+]] = arith.ori %{{.+}}, %[[AFTER]] : i1
// CHECK: scf.if %[[HIDE]] {
// CHECK-NEXT: "hw.mask"(%{{.+}}, %[[ROW]], %[[KV]]) {causal = true, keys = 200 : i64}
func.func @causal_bf16(%q: tensor<4x200x32xbf16>, %k: tensor<4x200x32xbf16>, %v: tensor<4x200x32xbf16>) -> tensor<4x200x32xbf16> {
  %o = "nn.attention"(%q, %k, %v) {causal = true} : (tensor<4x200x32xbf16>, tensor<4x200x32xbf16>, tensor<4x200x32xbf16>) -> tensor<4x200x32xbf16>
  return %o : tensor<4x200x32xbf16>
}

// -----

// A mask broadcast over the heads: its tile is loaded with K (one async
// copy group, the mask's batch index 0 for the heads' dim of 1), copied to
// registers, made f32 and added to the scaled scores.
// CHECK-LABEL: func.func private @masked_attention_0
// CHECK-SAME: %[[M:[^:]+]]: memref<2x1x37x100xf16>
// CHECK: scf.for %[[KV:.+]] = %{{.+}} to %{{.+}} step
// CHECK: %[[TK:.+]] = "hw.async_copy"(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[KV]], %{{.+}})
// CHECK: %[[TM:.+]] = "hw.async_copy"(%[[M]], %[[MS:[^,]+]], %{{.+}}, %c0, %{{.+}}, %[[KV]])
// CHECK: "hw.commit"(%[[TK]], %[[TM]])
// CHECK: "hw.mul"(%[[S:.+]], %{{.+}}, %[[S]])
// CHECK: "hw.copy"(%[[MS]], %[[MT:.+]], %c0, %c0)
// CHECK: "hw.cast"(%[[MT]], %[[MF:.+]]) :
// CHECK: "hw.add"(%[[S]], %[[MF]], %[[S]])
// CHECK: "hw.mask"(%[[S]],
func.func @masked(%q: tensor<2x4x37x64xf16>, %k: tensor<2x4x100x64xf16>, %v: tensor<2x4x100x64xf16>, %m: tensor<2x1x37x100xf16>) -> tensor<2x4x37x64xf16> {
  %o = "nn.attention"(%q, %k, %v, %m) : (tensor<2x4x37x64xf16>, tensor<2x4x100x64xf16>, tensor<2x4x100x64xf16>, tensor<2x1x37x100xf16>) -> tensor<2x4x37x64xf16>
  return %o : tensor<2x4x37x64xf16>
}

// -----

// f32 runs on CUDA cores with fused multiply-adds, accurate to f32: both
// contractions have unit = "fma", P goes through shared memory.
// CHECK-LABEL: func.func private @attention_f32_attention_0
// CHECK: %[[PS:.+]] = "hw.alloc"() : () -> memref<64x32xf32, #gpu.address_space<workgroup>>
// CHECK: "hw.contract"(%{{.+}}, %{{.+}}, %[[S:.+]]) {transpose_b = true, unit = "fma"}
// CHECK: "hw.copy"(%[[S]], %[[PS]], %c0, %c0)
// CHECK: "hw.wait"() : () -> ()
// CHECK: "hw.contract"(%[[PS]], %{{.+}}, %{{.+}}) {unit = "fma"}
// CHECK-NOT: "hw.mma"
func.func @attention_f32(%q: tensor<1x4x16x16xf32>, %k: tensor<1x4x16x16xf32>, %v: tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32> {
  %o = "nn.attention"(%q, %k, %v) {causal = true} : (tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>) -> tensor<1x4x16x16xf32>
  return %o : tensor<1x4x16x16xf32>
}

// -----

// Rows of 37 f16 (74 bytes) are no multiple of 4 bytes: the tiles are
// loaded by synchronous copies, each followed by a barrier; D = 37 is
// padded to 48 (mma.sync's K of 16), the columns past it read zeros.
// CHECK-LABEL: func.func private @narrow_rows_attention_0
// CHECK-NOT: "hw.async_copy"
// CHECK: "hw.copy"(%{{.+}}, %{{.+}}) : (memref<37x37xf16>, memref<64x48xf16, #gpu.address_space<workgroup>>
// CHECK: scf.for
// CHECK: "hw.copy"
// CHECK: "hw.copy"
// CHECK: "hw.barrier"
// CHECK: "hw.contract"
func.func @narrow_rows(%q: tensor<37x37xf16>, %k: tensor<37x37xf16>, %v: tensor<37x37xf16>) -> tensor<37x37xf16> {
  %o = "nn.attention"(%q, %k, %v) : (tensor<37x37xf16>, tensor<37x37xf16>, tensor<37x37xf16>) -> tensor<37x37xf16>
  return %o : tensor<37x37xf16>
}

// -----

// Not causal, with key tiles that divide the keys: nothing to hide.
// CHECK-LABEL: func.func private @divided_keys_attention_0
// CHECK: "hw.contract"
// CHECK-NOT: "hw.mask"
// CHECK: "hw.reduce_max"
func.func @divided_keys(%q: tensor<64x32xf16>, %k: tensor<128x32xf16>, %v: tensor<128x32xf16>) -> tensor<64x32xf16> {
  %o = "nn.attention"(%q, %k, %v) : (tensor<64x32xf16>, tensor<128x32xf16>, tensor<128x32xf16>) -> tensor<64x32xf16>
  return %o : tensor<64x32xf16>
}

// -----

// A result with no elements (no queries) is a new buffer: no kernel.
// CHECK-LABEL: func.func @no_queries
// CHECK-NOT: "hw.launch"
// CHECK-NOT: "nn.attention"
// CHECK: memref.alloc() : memref<2x0x16xf16>
func.func @no_queries(%q: tensor<2x0x16xf16>, %k: tensor<2x5x16xf16>, %v: tensor<2x5x16xf16>) -> tensor<2x0x16xf16> {
  %o = "nn.attention"(%q, %k, %v) : (tensor<2x0x16xf16>, tensor<2x5x16xf16>, tensor<2x5x16xf16>) -> tensor<2x0x16xf16>
  return %o : tensor<2x0x16xf16>
}

// -----

// A mask broadcast over the keys (or the queries) is broadcast to
// [Sq, Sk] by a kernel of its own first; the attention kernel reads that.
// CHECK-LABEL: func.func @mask_over_keys
// CHECK: "hw.launch"(%{{.+}}, %[[FULL:.+]]) {{{.+}}kernel = @mask_over_keys_attention_0_mask} : (memref<16x1xf16>, memref<16x8xf16>) -> ()
// CHECK: %[[MASK:.+]] = bufferization.to_tensor %[[FULL]]
// CHECK: %[[MASKED:.+]] = bufferization.to_buffer %[[MASK]]
// CHECK: "hw.launch"(%{{.+}}, %{{.+}}, %{{.+}}, %[[MASKED]], %{{.+}}) {{{.+}}kernel = @mask_over_keys_attention_0}
// CHECK-NOT: "nn.attention"
func.func @mask_over_keys(%q: tensor<16x32xf16>, %k: tensor<8x32xf16>, %v: tensor<8x32xf16>, %m: tensor<16x1xf16>) -> tensor<16x32xf16> {
  %o = "nn.attention"(%q, %k, %v, %m) : (tensor<16x32xf16>, tensor<8x32xf16>, tensor<8x32xf16>, tensor<16x1xf16>) -> tensor<16x32xf16>
  return %o : tensor<16x32xf16>
}

// -----

// Head dims of 2048 f32 need more shared memory than a block has, even in
// the smallest tiles: left, and reported at the op.
// CHECK-LABEL: func.func @huge_heads
// CHECK: "nn.attention"
// ERROR: nn-to-hw-attention.mlir:[[# @LINE + 2]]:8: error: 'nn.attention' is not lowered to hw kernels: its head dims (2048 and 2048) need more shared memory than a block has on sm_80, even for the smallest tiles
func.func @huge_heads(%q: tensor<8x2048xf32>, %k: tensor<8x2048xf32>, %v: tensor<8x2048xf32>) -> tensor<8x2048xf32> {
  %o = "nn.attention"(%q, %k, %v) : (tensor<8x2048xf32>, tensor<8x2048xf32>, tensor<8x2048xf32>) -> tensor<8x2048xf32>
  return %o : tensor<8x2048xf32>
}
