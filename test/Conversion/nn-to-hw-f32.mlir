// RUN: lamina-opt %s --split-input-file --convert-nn-to-hw="chip=sm_80 keep-unconverted" | FileCheck %s
// RUN: lamina-opt %s --split-input-file --convert-nn-to-hw="chip=sm_90a keep-unconverted" | FileCheck %s --check-prefix=SM90

// f32 matmuls on tensor cores: accurate to f32 by default (3xTF32), one
// rounded tf32 product where precision = "tf32" allows it; operands that
// an nn.transpose of the last two dims makes are read in place (the
// transpose's input is the kernel's argument and its tiles are loaded
// transposed), for f32, f16 and bf16; a batch of A over one B is one
// matmul of A's rows. On sm_90a, f32 and transposed
// operands take cp.async and mma.sync (wgmma and its TMA loads read f16
// and bf16 tiles that are not transposed).

// CHECK-LABEL: func.func @f32_bias
// CHECK: "hw.launch"({{.+}}) {{{.+}}kernel = @f32_bias_matmul_0} : (memref<100x75xf32>, memref<75x130xf32>, memref<130xf32>, memref<100x130xf32>) -> ()
// CHECK-LABEL: func.func private @f32_bias_matmul_0_epilogue(%{{.+}}: f32, %{{.+}}: f32) -> f32
// CHECK-NOT: arith.truncf
// CHECK-LABEL: func.func private @f32_bias_matmul_0(
// CHECK-DAG: %[[A:.+]] = "hw.alloc"() : () -> memref<64x32xf32, #gpu.address_space<workgroup>>
// CHECK-DAG: %[[B:.+]] = "hw.alloc"() : () -> memref<32x64xf32, #gpu.address_space<workgroup>>
// CHECK: "hw.async_copy"
// CHECK: "hw.mma"(%[[A]], %[[B]], %{{.+}}) {precision = "3xtf32"}
// SM90-LABEL: func.func private @f32_bias_matmul_0(
// SM90-NOT: "hw.tma_load"
// SM90: "hw.async_copy"
// SM90: "hw.mma"({{.+}}) {precision = "3xtf32"}
func.func @f32_bias(%a: tensor<100x75xf32>, %b: tensor<75x130xf32>, %bias: tensor<130xf32>) -> tensor<100x130xf32> {
  %0 = "nn.matmul"(%a, %b) : (tensor<100x75xf32>, tensor<75x130xf32>) -> tensor<100x130xf32>
  %1 = "nn.add"(%0, %bias) : (tensor<100x130xf32>, tensor<130xf32>) -> tensor<100x130xf32>
  return %1 : tensor<100x130xf32>
}

// -----

// CHECK-LABEL: func.func private @tf32_allowed_matmul_0(
// CHECK: "hw.mma"({{.+}}) {precision = "tf32_rounded"}
func.func @tf32_allowed(%a: tensor<70x90xf32>, %b: tensor<90x60xf32>) -> tensor<70x60xf32> {
  %0 = "nn.matmul"(%a, %b) {precision = "tf32"} : (tensor<70x90xf32>, tensor<90x60xf32>) -> tensor<70x60xf32>
  return %0 : tensor<70x60xf32>
}

// -----

// A linear layer: x times the transpose of W [N, K]. No transpose is
// left; the kernel reads W, its B tiles N x K (BN x BK) from (col, k).
// CHECK-LABEL: func.func @linear
// CHECK-SAME: (%[[X:.+]]: tensor<33x40xf32>, %[[W:.+]]: tensor<24x40xf32>, %[[BIAS:.+]]: tensor<24xf32>)
// CHECK-NOT: "nn.transpose"
// CHECK-DAG: %[[WM:.+]] = bufferization.to_buffer %[[W]] read_only : tensor<24x40xf32> to memref<24x40xf32>
// CHECK: "hw.launch"(%{{.+}}, %[[WM]], %{{.+}}, %{{.+}}) {{{.+}}kernel = @linear_matmul_0}
// CHECK-NOT: "nn.
// CHECK-LABEL: func.func private @linear_matmul_0(
// CHECK-SAME: %{{.+}}: memref<33x40xf32>, %[[WK:[^:]+]]: memref<24x40xf32>
// CHECK: = arith.muli
// CHECK: %[[COL:.+]] = arith.muli
// CHECK: = "hw.alloc"() : () -> memref<64x32xf32, #gpu.address_space<workgroup>>
// CHECK: %[[B:.+]] = "hw.alloc"() : () -> memref<64x32xf32, #gpu.address_space<workgroup>>
// CHECK: scf.for %[[K:[^ ]+]] =
// CHECK: "hw.async_copy"(%[[WK]], %[[B]], %[[COL]], %[[K]])
// CHECK: "hw.mma"({{.+}}) {precision = "3xtf32", transpose_b = true}
func.func @linear(%x: tensor<33x40xf32>, %w: tensor<24x40xf32>, %bias: tensor<24xf32>) -> tensor<33x24xf32> {
  %t = "nn.transpose"(%w) {perm = array<i64: 1, 0>} : (tensor<24x40xf32>) -> tensor<40x24xf32>
  %0 = "nn.matmul"(%x, %t) : (tensor<33x40xf32>, tensor<40x24xf32>) -> tensor<33x24xf32>
  %1 = "nn.add"(%0, %bias) : (tensor<33x24xf32>, tensor<24xf32>) -> tensor<33x24xf32>
  %2 = "nn.relu"(%1) : (tensor<33x24xf32>) -> tensor<33x24xf32>
  return %2 : tensor<33x24xf32>
}

// -----

// A transposed: its tiles K x M (BK x BM), loaded from (k, row).
// CHECK-LABEL: func.func private @transposed_a_matmul_0(
// CHECK-SAME: %[[XK:[^:]+]]: memref<40x33xf32>
// CHECK: %[[ROW:.+]] = arith.muli
// CHECK: %[[A:.+]] = "hw.alloc"() : () -> memref<32x64xf32, #gpu.address_space<workgroup>>
// CHECK: scf.for %[[K:[^ ]+]] =
// CHECK: "hw.async_copy"(%[[XK]], %[[A]], %[[K]], %[[ROW]])
// CHECK: "hw.mma"({{.+}}) {precision = "3xtf32", transpose_a = true}
func.func @transposed_a(%x: tensor<40x33xf32>, %b: tensor<40x24xf32>) -> tensor<33x24xf32> {
  %t = "nn.transpose"(%x) {perm = array<i64: 1, 0>} : (tensor<40x33xf32>) -> tensor<33x40xf32>
  %0 = "nn.matmul"(%t, %b) : (tensor<33x40xf32>, tensor<40x24xf32>) -> tensor<33x24xf32>
  return %0 : tensor<33x24xf32>
}

// -----

// Batched, the last two dims of B swapped.
// CHECK-LABEL: func.func @batched_transposed
// CHECK-NOT: "nn.transpose"
// CHECK: "hw.launch"({{.+}}) {{{.+}}grid = array<i64: 1, 1, 2>, kernel = @batched_transposed_matmul_0} : (memref<2x30x20xf32>, memref<2x25x20xf32>, memref<2x30x25xf32>) -> ()
// CHECK: "hw.mma"({{.+}}) {precision = "3xtf32", transpose_b = true}
func.func @batched_transposed(%a: tensor<2x30x20xf32>, %w: tensor<2x25x20xf32>) -> tensor<2x30x25xf32> {
  %t = "nn.transpose"(%w) {perm = array<i64: 0, 2, 1>} : (tensor<2x25x20xf32>) -> tensor<2x20x25xf32>
  %0 = "nn.matmul"(%a, %t) : (tensor<2x30x20xf32>, tensor<2x20x25xf32>) -> tensor<2x30x25xf32>
  return %0 : tensor<2x30x25xf32>
}

// -----

// f16 and bf16 read transposed operands in place too; on sm_90a through
// cp.async and mma.sync rather than TMA and wgmma.
// CHECK-LABEL: func.func private @half_linear_matmul_0(
// CHECK: "hw.mma"({{.+}}) {transpose_b = true}
// CHECK-LABEL: func.func private @half_linear_matmul_1(
// CHECK: "hw.mma"({{.+}}) {transpose_a = true, transpose_b = true}
// SM90-LABEL: func.func private @half_linear_matmul_0(
// SM90-NOT: "hw.tma_load"
// SM90: "hw.async_copy"
// SM90: "hw.mma"({{.+}}) {transpose_b = true}
func.func @half_linear(%x: tensor<65x48xf16>, %w: tensor<72x48xf16>, %y: tensor<32x80xbf16>, %v: tensor<56x32xbf16>) -> (tensor<65x72xf16>, tensor<80x56xbf16>) {
  %t = "nn.transpose"(%w) {perm = array<i64: 1, 0>} : (tensor<72x48xf16>) -> tensor<48x72xf16>
  %0 = "nn.matmul"(%x, %t) : (tensor<65x48xf16>, tensor<48x72xf16>) -> tensor<65x72xf16>
  %ty = "nn.transpose"(%y) {perm = array<i64: 1, 0>} : (tensor<32x80xbf16>) -> tensor<80x32xbf16>
  %tv = "nn.transpose"(%v) {perm = array<i64: 1, 0>} : (tensor<56x32xbf16>) -> tensor<32x56xbf16>
  %1 = "nn.matmul"(%ty, %tv) : (tensor<80x32xbf16>, tensor<32x56xbf16>) -> tensor<80x56xbf16>
  return %0, %1 : tensor<65x72xf16>, tensor<80x56xbf16>
}

// -----

// Not absorbed: a transpose whose result is also returned is a transpose
// kernel for that user, lowered after the matmul (which still reads W in
// place); a transpose that does not swap the last two dims is an operand
// like any other (its kernel first, the matmul reading its result, not
// transposed).
// CHECK-LABEL: func.func @transposes_kept
// CHECK-SAME: (%{{.+}}: tensor<33x40xf32>, %[[W:[^:]+]]: tensor<24x40xf32>
// CHECK: "hw.launch"({{.+}}) {{{.+}}kernel = @transposes_kept_transpose_0}
// CHECK: %[[T:.+]] = bufferization.to_tensor
// CHECK: %[[WM:.+]] = bufferization.to_buffer %[[W]]
// CHECK: "hw.launch"(%{{.+}}, %[[WM]], %{{.+}}) {{{.+}}kernel = @transposes_kept_matmul_0} : (memref<33x40xf32>, memref<24x40xf32>, memref<33x24xf32>)
// CHECK: "hw.launch"({{.+}}) {{{.+}}kernel = @transposes_kept_transpose_1}
// CHECK: %[[P:.+]] = bufferization.to_tensor
// CHECK: %[[PM:.+]] = bufferization.to_buffer %[[P]]
// CHECK: "hw.launch"(%{{.+}}, %[[PM]], %{{.+}}) {{{.+}}kernel = @transposes_kept_matmul_1}
// CHECK: return %{{.+}}, %[[T]], %{{.+}}
// CHECK-LABEL: func.func private @transposes_kept_matmul_1(
// CHECK: "hw.mma"({{.+}}) {precision = "3xtf32"} :
func.func @transposes_kept(%x: tensor<33x40xf32>, %w: tensor<24x40xf32>, %a: tensor<3x16x24xf32>, %b: tensor<24x3x16xf32>) -> (tensor<33x24xf32>, tensor<40x24xf32>, tensor<3x16x16xf32>) {
  %t = "nn.transpose"(%w) {perm = array<i64: 1, 0>} : (tensor<24x40xf32>) -> tensor<40x24xf32>
  %0 = "nn.matmul"(%x, %t) : (tensor<33x40xf32>, tensor<40x24xf32>) -> tensor<33x24xf32>
  %p = "nn.transpose"(%b) {perm = array<i64: 1, 0, 2>} : (tensor<24x3x16xf32>) -> tensor<3x24x16xf32>
  %1 = "nn.matmul"(%a, %p) : (tensor<3x16x24xf32>, tensor<3x24x16xf32>) -> tensor<3x16x16xf32>
  return %0, %t, %1 : tensor<33x24xf32>, tensor<40x24xf32>, tensor<3x16x16xf32>
}

// -----

// A linear layer on batched activations (x [2, 17, 40] times W^T): one
// matmul of x's 34 rows, the kernel's [34, 24] result expanded to the
// result's shape for its users.
// CHECK-LABEL: func.func @batched_linear
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x17x40xf32>, %[[W:[^:]+]]: tensor<24x40xf32>, %{{.+}}: tensor<24xf32>)
// CHECK-NOT: "nn.
// CHECK: %[[XR:.+]] = tensor.collapse_shape %[[X]] {{\[\[}}0, 1], [2]] : tensor<2x17x40xf32> into tensor<34x40xf32>
// CHECK: "hw.launch"({{.+}}) {{{.+}}kernel = @batched_linear_matmul_0} : (memref<34x40xf32>, memref<24x40xf32>, memref<24xf32>, memref<34x24xf32>) -> ()
// CHECK: %[[OUT:.+]] = bufferization.to_tensor %{{.+}} : memref<34x24xf32> to tensor<34x24xf32>
// CHECK: %[[SHAPED:.+]] = tensor.expand_shape %[[OUT]] {{\[\[}}0, 1], [2]] output_shape [2, 17, 24] : tensor<34x24xf32> into tensor<2x17x24xf32>
// CHECK: return %[[SHAPED]]
// CHECK-LABEL: func.func private @batched_linear_matmul_0(
// CHECK: "hw.mma"({{.+}}) {precision = "3xtf32", transpose_b = true}
func.func @batched_linear(%x: tensor<2x17x40xf32>, %w: tensor<24x40xf32>, %bias: tensor<24xf32>) -> tensor<2x17x24xf32> {
  %t = "nn.transpose"(%w) {perm = array<i64: 1, 0>} : (tensor<24x40xf32>) -> tensor<40x24xf32>
  %0 = "nn.matmul"(%x, %t) : (tensor<2x17x40xf32>, tensor<40x24xf32>) -> tensor<2x17x24xf32>
  %1 = "nn.add"(%0, %bias) : (tensor<2x17x24xf32>, tensor<24xf32>) -> tensor<2x17x24xf32>
  %2 = "nn.relu"(%1) : (tensor<2x17x24xf32>) -> tensor<2x17x24xf32>
  return %2 : tensor<2x17x24xf32>
}
