// RUN: lamina-opt %s --split-input-file --convert-nn-to-hw="chip=sm_80 keep-unconverted" | FileCheck %s
// RUN: lamina-opt %s --split-input-file --convert-nn-to-hw="chip=sm_90a keep-unconverted" | FileCheck %s --check-prefix=SM90
// RUN: not lamina-opt %s --split-input-file --convert-nn-to-hw=chip=sm_80 2>&1 | FileCheck %s --check-prefix=ERROR

// A matmul and its bias + relu become a kernel launched on buffers of the
// tensors; its K loop loads tiles asynchronously under a pipelining
// annotation; the epilogue is a scalar function of the accumulator and the
// bias.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[A:.+]]: tensor<200x96xf16>, %[[B:.+]]: tensor<96x136xf16>, %[[BIAS:.+]]: tensor<136xf16>)
// CHECK-DAG: %[[AM:.+]] = bufferization.to_buffer %[[A]] read_only : tensor<200x96xf16> to memref<200x96xf16>
// CHECK-DAG: %[[BM:.+]] = bufferization.to_buffer %[[B]] read_only
// CHECK-DAG: %[[BIASM:.+]] = bufferization.to_buffer %[[BIAS]] read_only
// CHECK: %[[C:.+]] = memref.alloc() : memref<200x136xf16>
// CHECK: "hw.launch"(%[[AM]], %[[BM]], %[[BIASM]], %[[C]]) {block = array<i64: 128>, grid = array<i64: 4, 3>, kernel = @main_matmul_0}
// CHECK: %[[R:.+]] = bufferization.to_tensor %[[C]] restrict writable
// CHECK: return %[[R]]
// CHECK-NOT: nn.

// CHECK-LABEL: func.func private @main_matmul_0_epilogue(%{{.+}}: f32, %{{.+}}: f16) -> f16
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK: arith.truncf

// CHECK-LABEL: func.func private @main_matmul_0
// CHECK-SAME: attributes {hw.kernel}
// CHECK: "hw.alloc"() : () -> memref<64x32xf16, #gpu.address_space<workgroup>>
// CHECK: "hw.alloc"() : () -> memref<32x64xf16, #gpu.address_space<workgroup>>
// CHECK: "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
// CHECK: scf.for
// CHECK-NEXT: "hw.pipeline"() {stages = 3 : i64}
// CHECK: "hw.async_copy"
// CHECK: "hw.async_copy"
// CHECK: "hw.commit"
// CHECK: "hw.wait"
// CHECK: "hw.mma"
// CHECK: "hw.barrier"
// CHECK: "hw.store"({{.+}}) {epilogue = @main_matmul_0_epilogue

// On sm_90a: TMA loads of 64-wide K steps on an mbarrier.
// SM90-LABEL: func.func private @main_matmul_0(
// SM90: "hw.mbarrier_init"() {count = 2 : i64}
// SM90: "hw.alloc"() : () -> memref<64x64xf16, #gpu.address_space<workgroup>>
// SM90: "hw.pipeline"() {stages = 2 : i64}
// SM90: "hw.tma_load"
// SM90: "hw.tma_load"
// SM90: "hw.mbarrier_wait"
// SM90: "hw.mma"
func.func @main(%a: tensor<200x96xf16>, %b: tensor<96x136xf16>, %bias: tensor<136xf16>) -> tensor<200x136xf16> {
  %0 = "nn.matmul"(%a, %b) : (tensor<200x96xf16>, tensor<96x136xf16>) -> tensor<200x136xf16>
  %1 = "nn.add"(%0, %bias) : (tensor<200x136xf16>, tensor<136xf16>) -> tensor<200x136xf16>
  %2 = "nn.relu"(%1) : (tensor<200x136xf16>) -> tensor<200x136xf16>
  return %2 : tensor<200x136xf16>
}

// -----

// Rows of an odd number of f16 cannot be copied asynchronously: the kernel
// copies synchronously, without a pipeline. A residual (M x N) is added in
// the epilogue; the matmul alone has no relu.
// CHECK-LABEL: func.func private @odd_matmul_0
// CHECK-NOT: hw.pipeline
// CHECK-NOT: hw.async_copy
// CHECK: "hw.copy"
// CHECK: "hw.barrier"
// CHECK: "hw.mma"
// CHECK: "hw.store"(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) {epilogue = @odd_matmul_0_epilogue, operandSegmentSizes = array<i32: 1, 1, 1, 2>} : (memref<64x64xf32, #gpu.address_space<private>>, memref<33x40xbf16>, memref<33x40xbf16>, index, index) -> ()
// CHECK-NOT: arith.maximumf
func.func @odd(%a: tensor<33x17xbf16>, %b: tensor<17x40xbf16>, %r: tensor<33x40xbf16>) -> tensor<33x40xbf16> {
  %0 = "nn.matmul"(%a, %b) : (tensor<33x17xbf16>, tensor<17x40xbf16>) -> tensor<33x40xbf16>
  %1 = "nn.add"(%r, %0) : (tensor<33x40xbf16>, tensor<33x40xbf16>) -> tensor<33x40xbf16>
  return %1 : tensor<33x40xbf16>
}

// -----

// A gelu is fused too: its erf a rational function of arith ops in the
// epilogue (no math op, which the GPU would take from libdevice).
// CHECK-LABEL: func.func @gelu
// CHECK: "hw.launch"
// CHECK-NOT: nn.gelu
// CHECK-LABEL: func.func private @gelu_matmul_0_epilogue(%{{.+}}: f32) -> f16
// CHECK: arith.minimumf
// CHECK: arith.maximumf
// CHECK: arith.divf
// CHECK-NOT: math.
// CHECK: arith.truncf
func.func @gelu(%a: tensor<64x32xf16>, %b: tensor<32x64xf16>) -> tensor<64x64xf16> {
  %0 = "nn.matmul"(%a, %b) : (tensor<64x32xf16>, tensor<32x64xf16>) -> tensor<64x64xf16>
  %1 = "nn.gelu"(%0) : (tensor<64x64xf16>) -> tensor<64x64xf16>
  return %1 : tensor<64x64xf16>
}

// -----

// A batched matmul: the batch runs along the grid's z (block_id dim 2), its
// loads asynchronous (cp.async, also on sm_90a: rows of 100 bf16 are no
// multiple of 16 bytes, as TMA needs), with a residual of the result's shape.
// CHECK-LABEL: func.func @batched
// CHECK: "hw.launch"({{.+}}) {block = array<i64: 128>, grid = array<i64: 2, 2, 3>, kernel = @batched_matmul_0}
// CHECK-LABEL: func.func private @batched_matmul_0
// CHECK-DAG: %[[BATCH:.+]] = "hw.block_id"() {dim = 2 : i64}
// CHECK: "hw.async_copy"(%{{.+}}, %{{.+}}, %[[BATCH]], %{{.+}}, %{{.+}}) : (memref<3x72x40xbf16>
// CHECK: "hw.store"(%{{.+}}, %{{.+}}, %{{.+}}, %[[BATCH]], %{{.+}}, %{{.+}})
// SM90-LABEL: func.func private @batched_matmul_0
// SM90-NOT: hw.tma_load
// SM90: "hw.async_copy"
func.func @batched(%a: tensor<3x72x40xbf16>, %b: tensor<3x40x100xbf16>, %r: tensor<3x72x100xbf16>) -> tensor<3x72x100xbf16> {
  %0 = "nn.matmul"(%a, %b) : (tensor<3x72x40xbf16>, tensor<3x40x100xbf16>) -> tensor<3x72x100xbf16>
  %1 = "nn.add"(%0, %r) : (tensor<3x72x100xbf16>, tensor<3x72x100xbf16>) -> tensor<3x72x100xbf16>
  return %1 : tensor<3x72x100xbf16>
}

// -----

// A batched B times an unbatched A is a batched kernel whose A has no
// batch index; a matmul whose result has two users keeps them outside,
// where each is an elementwise kernel; a conv is a kernel of its own; an
// attention's mask broadcast over the keys is broadcast by a kernel first.
// An op no kernel covers (an attention whose head dims need more shared
// memory than a block has) is left with keep-unconverted, and an error
// without it.
// ERROR: nn-to-hw.mlir:[[@LINE+24]]:8: error: 'nn.attention' is not lowered to hw kernels: its head dims (4096 and 4096) need more shared memory than a block has on sm_80
// ERROR-NOT: error:
// CHECK-LABEL: func.func @left_alone
// CHECK: "hw.launch"({{.+}}) {{{.+}}grid = array<i64: 1, 1, 2>, kernel = @left_alone_matmul_0}
// CHECK: "hw.launch"({{.+}}) {{{.+}}kernel = @left_alone_matmul_1}
// CHECK: "hw.launch"({{.+}}) {{{.+}}kernel = @left_alone_relu_0}
// CHECK: "hw.launch"({{.+}}) {{{.+}}kernel = @left_alone_add_0}
// CHECK: "hw.launch"({{.+}}) {{{.+}}kernel = @left_alone_conv2d_0}
// CHECK: "hw.launch"(%{{.+}}, %[[MASK:.+]]) {{{.+}}kernel = @left_alone_attention_0_mask} : (memref<16x1xf16>, memref<16x16xf16>) -> ()
// CHECK: %[[MASKED:.+]] = bufferization.to_tensor %[[MASK]]
// CHECK: "hw.launch"({{.+}}) {{{.+}}kernel = @left_alone_attention_0}
// CHECK: "nn.attention"
// CHECK-NOT: "nn.relu"(
// CHECK-NOT: "nn.add"(
// CHECK-LABEL: func.func private @left_alone_matmul_0(
// CHECK-SAME: memref<16x16xf16>, %{{.+}}: memref<2x16x16xf16>
func.func @left_alone(%y: tensor<2x16x16xf16>, %h: tensor<16x16xf16>, %w: tensor<4x2x3x3xf16>, %m: tensor<16x1xf16>, %e: tensor<16x4096xf32>) -> (tensor<2x16x16xf16>, tensor<16x16xf16>, tensor<16x16xf16>, tensor<1x4x14x14xf16>, tensor<16x16xf16>, tensor<16x4096xf32>) {
  %1 = "nn.matmul"(%h, %y) : (tensor<16x16xf16>, tensor<2x16x16xf16>) -> tensor<2x16x16xf16>
  %2 = "nn.matmul"(%h, %h) : (tensor<16x16xf16>, tensor<16x16xf16>) -> tensor<16x16xf16>
  %3 = "nn.relu"(%2) : (tensor<16x16xf16>) -> tensor<16x16xf16>
  %4 = "nn.add"(%2, %h) : (tensor<16x16xf16>, tensor<16x16xf16>) -> tensor<16x16xf16>
  %x = "nn.reshape"(%y) : (tensor<2x16x16xf16>) -> tensor<1x2x16x16xf16>
  %5 = "nn.conv2d"(%x, %w) : (tensor<1x2x16x16xf16>, tensor<4x2x3x3xf16>) -> tensor<1x4x14x14xf16>
  %6 = "nn.attention"(%h, %h, %h, %m) : (tensor<16x16xf16>, tensor<16x16xf16>, tensor<16x16xf16>, tensor<16x1xf16>) -> tensor<16x16xf16>
  %7 = "nn.attention"(%e, %e, %e) : (tensor<16x4096xf32>, tensor<16x4096xf32>, tensor<16x4096xf32>) -> tensor<16x4096xf32>
  return %1, %3, %4, %5, %6, %7 : tensor<2x16x16xf16>, tensor<16x16xf16>, tensor<16x16xf16>, tensor<1x4x14x14xf16>, tensor<16x16xf16>, tensor<16x4096xf32>
}
