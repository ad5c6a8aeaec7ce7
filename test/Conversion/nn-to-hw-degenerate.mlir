// RUN: lamina-opt %s --split-input-file --convert-nn-to-hw="chip=sm_80 keep-unconverted" | FileCheck %s
// RUN: lamina-opt %s --split-input-file --convert-nn-to-hw="chip=sm_90a keep-unconverted" | FileCheck %s --check-prefix=SM90

// Matmul chains with degenerate dims (1 and 0 in M, N, K and the batch) as
// hw kernels: each launch's arguments are the buffers of its tensors, of
// their shapes, matching its kernel's; an empty result needs no kernel;
// K = 0 stores the epilogue of zeros.

// A GEMV (M = 1) takes its operands' buffers of their own shapes: a [1, N]
// addend of a one-row result is a residual of the result's shape.
// CHECK-LABEL: func.func @gemv(
// CHECK: "hw.launch"({{.+}}) {block = array<i64: 128>, grid = array<i64: 1, 2>, kernel = @gemv_matmul_0} : (memref<1x64xf16>, memref<64x128xf16>, memref<1x128xf16>, memref<1x128xf16>) -> ()
// CHECK-LABEL: func.func private @gemv_matmul_0(%{{.+}}: memref<1x64xf16>, %{{.+}}: memref<64x128xf16>, %{{.+}}: memref<1x128xf16>, %{{.+}}: memref<1x128xf16>) attributes {hw.kernel}
// CHECK: "hw.async_copy"(%{{.+}}) : (memref<1x64xf16>
// CHECK: "hw.mma"
// CHECK: "hw.store"({{.+}}) {epilogue = {{.+}}} : (memref<64x64xf32, #gpu.address_space<private>>, memref<1x128xf16>, memref<1x128xf16>, index, index) -> ()
// SM90-LABEL: func.func private @gemv_matmul_0(
// SM90: "hw.tma_load"(%{{.+}}) : (memref<1x64xf16>
func.func @gemv(%a: tensor<1x64xf16>, %b: tensor<64x128xf16>, %r: tensor<1x128xf16>) -> tensor<1x128xf16> {
  %0 = "nn.matmul"(%a, %b) : (tensor<1x64xf16>, tensor<64x128xf16>) -> tensor<1x128xf16>
  %1 = "nn.add"(%0, %r) : (tensor<1x128xf16>, tensor<1x128xf16>) -> tensor<1x128xf16>
  return %1 : tensor<1x128xf16>
}

// -----

// CHECK-LABEL: func.func @gemv_bias(
// CHECK: kernel = @gemv_bias_matmul_0} : (memref<1x64xbf16>, memref<64x128xbf16>, memref<128xbf16>, memref<1x128xbf16>) -> ()
// CHECK-LABEL: func.func private @gemv_bias_matmul_0_epilogue(%{{.+}}: f32, %{{.+}}: bf16) -> bf16
func.func @gemv_bias(%a: tensor<1x64xbf16>, %b: tensor<64x128xbf16>, %bias: tensor<128xbf16>) -> tensor<1x128xbf16> {
  %0 = "nn.matmul"(%a, %b) : (tensor<1x64xbf16>, tensor<64x128xbf16>) -> tensor<1x128xbf16>
  %1 = "nn.add"(%0, %bias) : (tensor<1x128xbf16>, tensor<128xbf16>) -> tensor<1x128xbf16>
  return %1 : tensor<1x128xbf16>
}

// -----

// K = 1: rows of 2 bytes, loaded synchronously; B is [1, N], not collapsed.
// CHECK-LABEL: func.func @k_one(
// CHECK: kernel = @k_one_matmul_0} : (memref<64x1xf16>, memref<1x128xf16>, memref<64x128xf16>) -> ()
// CHECK-LABEL: func.func private @k_one_matmul_0(
// CHECK: scf.for
// CHECK: "hw.copy"(%{{.+}}) : (memref<64x1xf16>
// CHECK: "hw.copy"(%{{.+}}) : (memref<1x128xf16>
// CHECK: "hw.mma"
func.func @k_one(%a: tensor<64x1xf16>, %b: tensor<1x128xf16>) -> tensor<64x128xf16> {
  %0 = "nn.matmul"(%a, %b) : (tensor<64x1xf16>, tensor<1x128xf16>) -> tensor<64x128xf16>
  return %0 : tensor<64x128xf16>
}

// -----

// A [1, N] bias row of a result of more rows is read as the vector [N].
// CHECK-LABEL: func.func @batched_bias_row(
// CHECK-SAME: %[[BIAS:[^:]+]]: tensor<1x128xf16>
// CHECK: %[[ROW:.+]] = tensor.collapse_shape %[[BIAS]] {{\[}}[0, 1]] : tensor<1x128xf16> into tensor<128xf16>
// CHECK: bufferization.to_buffer %[[ROW]] read_only : tensor<128xf16> to memref<128xf16>
// CHECK: "hw.launch"({{.+}}) {block = array<i64: 128>, grid = array<i64: 1, 2, 2>, kernel = @batched_bias_row_matmul_0} : (memref<2x8x64xf16>, memref<2x64x128xf16>, memref<128xf16>, memref<2x8x128xf16>) -> ()
func.func @batched_bias_row(%a: tensor<2x8x64xf16>, %b: tensor<2x64x128xf16>, %bias: tensor<1x128xf16>) -> tensor<2x8x128xf16> {
  %0 = "nn.matmul"(%a, %b) : (tensor<2x8x64xf16>, tensor<2x64x128xf16>) -> tensor<2x8x128xf16>
  %1 = "nn.add"(%0, %bias) : (tensor<2x8x128xf16>, tensor<1x128xf16>) -> tensor<2x8x128xf16>
  return %1 : tensor<2x8x128xf16>
}

// -----

// A batch of 1 with a residual of the result's shape (1 x 1 x N).
// CHECK-LABEL: func.func @batch_one_residual(
// CHECK: "hw.launch"({{.+}}) {block = array<i64: 128>, grid = array<i64: 1, 2, 1>, kernel = @batch_one_residual_matmul_0} : (memref<1x1x64xbf16>, memref<1x64x128xbf16>, memref<1x1x128xbf16>, memref<1x1x128xbf16>) -> ()
// CHECK: "hw.store"({{.+}}) {epilogue = {{.+}}} : (memref<64x64xf32, #gpu.address_space<private>>, memref<1x1x128xbf16>, memref<1x1x128xbf16>, index, index, index) -> ()
func.func @batch_one_residual(%a: tensor<1x1x64xbf16>, %b: tensor<1x64x128xbf16>, %r: tensor<1x1x128xbf16>) -> tensor<1x1x128xbf16> {
  %0 = "nn.matmul"(%a, %b) : (tensor<1x1x64xbf16>, tensor<1x64x128xbf16>) -> tensor<1x1x128xbf16>
  %1 = "nn.add"(%0, %r) : (tensor<1x1x128xbf16>, tensor<1x1x128xbf16>) -> tensor<1x1x128xbf16>
  return %1 : tensor<1x1x128xbf16>
}

// -----

// K = 0: the kernel loads nothing and stores the epilogue of zeros.
// CHECK-LABEL: func.func @k_zero(
// CHECK: "hw.launch"({{.+}}) {block = array<i64: 128>, grid = array<i64: 1, 1>, kernel = @k_zero_matmul_0} : (memref<48x0xf16>, memref<0x40xf16>, memref<40xf16>, memref<48x40xf16>) -> ()
// CHECK-LABEL: func.func private @k_zero_matmul_0(
// CHECK-NOT: scf.for
// CHECK-NOT: "hw.mma"
// CHECK: "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
// CHECK-NEXT: "hw.fill"
// CHECK-NEXT: "hw.store"({{.+}}) {epilogue = @k_zero_matmul_0_epilogue
// CHECK-NEXT: return
// SM90-LABEL: func.func private @k_zero_matmul_0(
// SM90-NOT: "hw.tma_load"
// SM90-NOT: "hw.mbarrier_init"
// SM90: "hw.store"
func.func @k_zero(%a: tensor<48x0xf16>, %b: tensor<0x40xf16>, %bias: tensor<40xf16>) -> tensor<48x40xf16> {
  %0 = "nn.matmul"(%a, %b) : (tensor<48x0xf16>, tensor<0x40xf16>) -> tensor<48x40xf16>
  %1 = "nn.add"(%0, %bias) : (tensor<48x40xf16>, tensor<40xf16>) -> tensor<48x40xf16>
  %2 = "nn.relu"(%1) : (tensor<48x40xf16>) -> tensor<48x40xf16>
  return %2 : tensor<48x40xf16>
}

// -----

// An empty result (M = 0) is a new empty buffer: no kernel, no launch.
// CHECK-LABEL: func.func @m_zero(
// CHECK-NEXT: %[[C:.+]] = memref.alloc() : memref<0x128xf16>
// CHECK-NEXT: %[[R:.+]] = bufferization.to_tensor %[[C]] restrict writable : memref<0x128xf16> to tensor<0x128xf16>
// CHECK-NEXT: return %[[R]]
// CHECK-NOT: hw.kernel
func.func @m_zero(%a: tensor<0x64xf16>, %b: tensor<64x128xf16>, %bias: tensor<128xf16>) -> tensor<0x128xf16> {
  %0 = "nn.matmul"(%a, %b) : (tensor<0x64xf16>, tensor<64x128xf16>) -> tensor<0x128xf16>
  %1 = "nn.add"(%0, %bias) : (tensor<0x128xf16>, tensor<128xf16>) -> tensor<0x128xf16>
  return %1 : tensor<0x128xf16>
}

// -----

// CHECK-LABEL: func.func @batch_zero(
// CHECK-NEXT: memref.alloc() : memref<0x8x16xbf16>
// CHECK-NOT: hw.launch
// CHECK-NOT: hw.kernel
func.func @batch_zero(%a: tensor<0x8x64xbf16>, %b: tensor<0x64x16xbf16>) -> tensor<0x8x16xbf16> {
  %0 = "nn.matmul"(%a, %b) : (tensor<0x8x64xbf16>, tensor<0x64x16xbf16>) -> tensor<0x8x16xbf16>
  return %0 : tensor<0x8x16xbf16>
}

// -----

// An f32 GEMV with no elements is a new empty buffer and no kernel, as
// f16's are.
// CHECK-LABEL: func.func @f32_gemv(
// CHECK-NEXT: memref.alloc() : memref<1x0xf32>
// CHECK-NOT: hw.launch
func.func @f32_gemv(%a: tensor<1x64xf32>, %b: tensor<64x0xf32>) -> tensor<1x0xf32> {
  %0 = "nn.matmul"(%a, %b) : (tensor<1x64xf32>, tensor<64x0xf32>) -> tensor<1x0xf32>
  return %0 : tensor<1x0xf32>
}

// -----

// B batched and A not, with an empty batch: nothing to compute, no kernel.
// CHECK-LABEL: func.func @broadcast_b(
// CHECK-NEXT: memref.alloc() : memref<0x8x16xf16>
// CHECK-NOT: hw.launch
func.func @broadcast_b(%a: tensor<8x64xf16>, %b: tensor<0x64x16xf16>) -> tensor<0x8x16xf16> {
  %0 = "nn.matmul"(%a, %b) : (tensor<8x64xf16>, tensor<0x64x16xf16>) -> tensor<0x8x16xf16>
  return %0 : tensor<0x8x16xf16>
}
