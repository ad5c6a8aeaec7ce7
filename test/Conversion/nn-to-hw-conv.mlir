// RUN: lamina-opt %s --split-input-file --nn-fuse --convert-nn-to-hw=chip=sm_80 | FileCheck %s

// Convolutions as hw kernels (lowering/nn_to_hw/conv.py), each with the
// elementwise ops of its fusion group: f16 and bf16 convs of one group as
// implicit GEMMs (hw.im2col, hw.mma, the group's ops the store's
// epilogue), the others as direct kernels (hw.conv_elements, the group's
// ops in registers).

// An f32 conv with its bias and relu: a direct kernel of 256 threads, one
// output element each.
// CHECK-LABEL: func.func @direct_relu(
// CHECK: "hw.launch"(%{{.+}}) {block = array<i64: 256>, grid = array<i64: 1>, kernel = @direct_relu_conv2d_0}
// CHECK-NOT: "nn.
// CHECK: return
// CHECK-LABEL: func.func private @direct_relu_conv2d_0(
// CHECK: "hw.conv_elements"(%{{.+}}, %{{.+}}, %[[SUM:.+]], %{{.+}}, %{{.+}}) {count = 256 : i64
// CHECK: "hw.elementwise"(%[[SUM]], %[[OUT:.+]]) {fn = "nn.relu"}
// CHECK: "hw.store_elements"(%[[OUT]]
func.func @direct_relu(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x6x6xf32> {
  %y = "nn.conv2d"(%x, %w, %b) : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  %r = "nn.relu"(%y) : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  return %r : tensor<1x4x6x6xf32>
}

// -----

// An f16 NHWC conv: an implicit GEMM on the pixels' rows, the filter's
// OIHW rows read as B transposed, the result's rows expanded to NHWC.
// CHECK-LABEL: func.func @gemm_nhwc(
// CHECK: tensor.collapse_shape %{{.+}} : tensor<4x3x3x3xf16> into tensor<108xf16>
// CHECK: tensor.expand_shape %{{.+}} output_shape [4, 27] : tensor<108xf16> into tensor<4x27xf16>
// CHECK: "hw.launch"(%{{.+}}, %{{.+}}, %{{.+}}) {block = array<i64: 128>, grid = array<i64: 1, 1>, kernel = @gemm_nhwc_conv2d_0}
// CHECK: tensor.expand_shape %{{.+}} {{\[}}[0, 1, 2], [3]] output_shape [1, 6, 6, 4] : tensor<36x4xf16> into tensor<1x6x6x4xf16>
// CHECK-LABEL: func.func private @gemm_nhwc_conv2d_0(
// CHECK: "hw.im2col"
// CHECK: "hw.mma"(%{{.+}}) {transpose_b = true}
func.func @gemm_nhwc(%x: tensor<1x8x8x3xf16>, %w: tensor<4x3x3x3xf16>) -> tensor<1x6x6x4xf16> {
  %y = "nn.conv2d"(%x, %w) {layout = "NHWC"} : (tensor<1x8x8x3xf16>, tensor<4x3x3x3xf16>) -> tensor<1x6x6x4xf16>
  return %y : tensor<1x6x6x4xf16>
}

// -----

// Not one kernel: a group whose add broadcasts the conv's result to a
// larger shape is lowered op by op (the conv's kernel, then the add's);
// a grouped f16 conv is a direct kernel, not an implicit GEMM.
// CHECK-LABEL: func.func @not_fused(
// CHECK: "hw.launch"({{.+}}) {{{.+}}kernel = @not_fused_conv2d_0}
// CHECK: "hw.launch"({{.+}}) {{{.+}}kernel = @not_fused_add_0}
// CHECK-NOT: "nn.
// CHECK-LABEL: func.func private @not_fused_conv2d_0(
// CHECK: "hw.conv_elements"({{.+}}) {{{.+}}groups = 2 : i64
// CHECK-NOT: "hw.im2col"
// CHECK-LABEL: func.func private @not_fused_add_0(
func.func @not_fused(%x: tensor<1x4x6x6xf16>, %w: tensor<4x2x3x3xf16>, %z: tensor<2x1x4x4x4xf16>) -> tensor<2x1x4x4x4xf16> {
  %y = "nn.conv2d"(%x, %w) {groups = 2 : i64} : (tensor<1x4x6x6xf16>, tensor<4x2x3x3xf16>) -> tensor<1x4x4x4xf16>
  %r = "nn.add"(%y, %z) : (tensor<1x4x4x4xf16>, tensor<2x1x4x4x4xf16>) -> tensor<2x1x4x4x4xf16>
  return %r : tensor<2x1x4x4x4xf16>
}
