// RUN: lamina-opt %s --split-input-file --cpu-convolutions-to-channels-last | FileCheck %s

// The padding moves after the input's transpose: the transpose writes the
// interior of a zero-filled NHWC tensor; the filter is transposed to HWCF
// and the zero fill of the result is one of the NHWC shape. The
// convolution, its fill and the result's transpose keep the fusion group
// of the epilogue.
// CHECK-LABEL: func.func @conv_bias_relu
// CHECK-NOT: linalg.conv_2d_nchw_fchw
// CHECK-NOT: tensor.pad
// CHECK: %[[PADDED:.+]] = linalg.fill {{.*}} -> tensor<1x18x18x8xf32>
// CHECK: %[[INTERIOR:.+]] = tensor.extract_slice %[[PADDED]][0, 1, 1, 0] [1, 16, 16, 8] [1, 1, 1, 1]
// CHECK: %[[X:.+]] = linalg.transpose ins(%{{.+}} : tensor<1x8x16x16xf32>) outs(%[[INTERIOR]] : tensor<1x16x16x8xf32>) permutation = [0, 2, 3, 1]
// CHECK: %[[XP:.+]] = tensor.insert_slice %[[X]] into %[[PADDED]][0, 1, 1, 0] [1, 16, 16, 8] [1, 1, 1, 1]
// CHECK: %[[W:.+]] = linalg.transpose ins(%{{.+}} : tensor<64x8x3x3xf32>) outs(%{{.+}} : tensor<3x3x8x64xf32>) permutation = [2, 3, 1, 0]
// CHECK: %[[INIT:.+]] = linalg.fill {{.*}}lamina.fusion_group = "g0"{{.*}} -> tensor<1x16x16x64xf32>
// CHECK: %[[Y:.+]] = linalg.conv_2d_nhwc_hwcf {{.*}}lamina.fusion_group = "g0"
// CHECK-SAME: ins(%[[XP]], %[[W]] : tensor<1x18x18x8xf32>, tensor<3x3x8x64xf32>) outs(%[[INIT]] : tensor<1x16x16x64xf32>)
// CHECK: linalg.transpose ins(%[[Y]] : tensor<1x16x16x64xf32>) outs(%{{.+}} : tensor<1x64x16x16xf32>) permutation = [0, 3, 1, 2]
// CHECK-SAME: lamina.fusion_group = "g0"
// CHECK: arith.maximumf
// CHECK-NOT: lamina.schedule

#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#bias = affine_map<(d0, d1, d2, d3) -> (d1)>
func.func @conv_bias_relu(%x: tensor<1x8x16x16xf32>, %w: tensor<64x8x3x3xf32>, %b: tensor<64xf32>) -> tensor<1x64x16x16xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %cst : f32
  } : tensor<1x8x16x16xf32> to tensor<1x8x18x18xf32>
  %e = tensor.empty() : tensor<1x64x16x16xf32>
  %f = linalg.fill {lamina.fusion_group = "g0", lamina.fusion_kind = "convolution"} ins(%cst : f32) outs(%e : tensor<1x64x16x16xf32>) -> tensor<1x64x16x16xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>, lamina.fusion_group = "g0", lamina.fusion_kind = "convolution"} ins(%padded, %w : tensor<1x8x18x18xf32>, tensor<64x8x3x3xf32>) outs(%f : tensor<1x64x16x16xf32>) -> tensor<1x64x16x16xf32>
  %r = linalg.generic {indexing_maps = [#map, #bias, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"], lamina.fusion_group = "g0", lamina.fusion_kind = "convolution"} ins(%c, %b : tensor<1x64x16x16xf32>, tensor<64xf32>) outs(%e : tensor<1x64x16x16xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    %m = arith.maximumf %s, %cst : f32
    linalg.yield %m : f32
  } -> tensor<1x64x16x16xf32>
  return %r : tensor<1x64x16x16xf32>
}

// -----

// Dilations and strides carry over; an init that is not a fill is
// transposed like the input.
// CHECK-LABEL: func.func @dilated_strided_accumulating
// CHECK: %[[INIT:.+]] = linalg.transpose ins(%{{.+}} : tensor<2x12x7x5xf32>) outs(%{{.+}} : tensor<2x7x5x12xf32>) permutation = [0, 2, 3, 1]
// CHECK: linalg.conv_2d_nhwc_hwcf {dilations = dense<2> : tensor<2xi64>, {{.*}}strides = dense<[1, 2]> : tensor<2xi64>}
// CHECK-SAME: outs(%[[INIT]] : tensor<2x7x5x12xf32>)

func.func @dilated_strided_accumulating(%x: tensor<2x3x11x13xf32>, %w: tensor<12x3x3x3xf32>, %acc: tensor<2x12x7x5xf32>) -> tensor<2x12x7x5xf32> {
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<2> : tensor<2xi64>, strides = dense<[1, 2]> : tensor<2xi64>} ins(%x, %w : tensor<2x3x11x13xf32>, tensor<12x3x3x3xf32>) outs(%acc : tensor<2x12x7x5xf32>) -> tensor<2x12x7x5xf32>
  return %c : tensor<2x12x7x5xf32>
}

// -----

// A convolution on dynamic shapes is left as it is.
// CHECK-LABEL: func.func @dynamic
// CHECK: linalg.conv_2d_nchw_fchw
// CHECK-NOT: linalg.conv_2d_nhwc_hwcf

func.func @dynamic(%x: tensor<?x3x9x9xf32>, %w: tensor<4x3x3x3xf32>, %acc: tensor<?x4x7x7xf32>) -> tensor<?x4x7x7xf32> {
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<?x3x9x9xf32>, tensor<4x3x3x3xf32>) outs(%acc : tensor<?x4x7x7xf32>) -> tensor<?x4x7x7xf32>
  return %c : tensor<?x4x7x7xf32>
}

// -----

// A constant filter is transposed at compile time: no transpose of it
// runs at each call, and the FCHW constant, unused, is gone.
// CHECK-LABEL: func.func @constant_filter
// CHECK-NOT: tensor<2x2x1x1xf32>
// CHECK: %[[W:.+]] = arith.constant dense<{{\[\[\[\[}}1.000000e+00, 3.000000e+00], [2.000000e+00, 4.000000e+00]]]]> : tensor<1x1x2x2xf32>
// CHECK: linalg.conv_2d_nhwc_hwcf {{.*}} ins(%{{.+}}, %[[W]] : tensor<1x4x4x2xf32>, tensor<1x1x2x2xf32>)

func.func @constant_filter(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
  %w = arith.constant dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]]]> : tensor<2x2x1x1xf32>
  %cst = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<1x2x2x2xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) outs(%f : tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  return %c : tensor<1x2x2x2xf32>
}

// -----

// A convolution computed channels-last by the program (nn-assign-layouts):
// its input is the transpose of an NHWC tensor and its result is
// transposed back. The transposes cancel against the rewrite's: the NHWC
// input is copied into the padding's interior, and the epilogue reads the
// NHWC convolution.
// CHECK-LABEL: func.func @between_channels_last_transposes
// CHECK-SAME: (%[[XN:.+]]: tensor<1x16x16x8xf32>
// CHECK: %[[PADDED:.+]] = linalg.fill {{.*}} -> tensor<1x18x18x8xf32>
// CHECK: %[[INTERIOR:.+]] = tensor.extract_slice %[[PADDED]][0, 1, 1, 0] [1, 16, 16, 8] [1, 1, 1, 1]
// CHECK: %[[X:.+]] = linalg.copy {{.*}}ins(%[[XN]] : tensor<1x16x16x8xf32>) outs(%[[INTERIOR]] : tensor<1x16x16x8xf32>)
// CHECK: %[[XP:.+]] = tensor.insert_slice %[[X]] into %[[PADDED]]
// CHECK: %[[W:.+]] = linalg.transpose ins(%{{.+}} : tensor<64x8x3x3xf32>)
// CHECK: %[[Y:.+]] = linalg.conv_2d_nhwc_hwcf {{.*}}ins(%[[XP]], %[[W]]
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic {{.*}}ins(%[[Y]] : tensor<1x16x16x64xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: return
#map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @between_channels_last_transposes(%xn: tensor<1x16x16x8xf32>, %w: tensor<64x8x3x3xf32>) -> tensor<1x16x16x64xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %en = tensor.empty() : tensor<1x8x16x16xf32>
  %x = linalg.transpose ins(%xn : tensor<1x16x16x8xf32>) outs(%en : tensor<1x8x16x16xf32>) permutation = [0, 3, 1, 2]
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %cst : f32
  } : tensor<1x8x16x16xf32> to tensor<1x8x18x18xf32>
  %e = tensor.empty() : tensor<1x64x16x16xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x64x16x16xf32>) -> tensor<1x64x16x16xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%padded, %w : tensor<1x8x18x18xf32>, tensor<64x8x3x3xf32>) outs(%f : tensor<1x64x16x16xf32>) -> tensor<1x64x16x16xf32>
  %eo = tensor.empty() : tensor<1x16x16x64xf32>
  %cn = linalg.transpose ins(%c : tensor<1x64x16x16xf32>) outs(%eo : tensor<1x16x16x64xf32>) permutation = [0, 2, 3, 1]
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%cn : tensor<1x16x16x64xf32>) outs(%eo : tensor<1x16x16x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %cst : f32
    linalg.yield %m : f32
  } -> tensor<1x16x16x64xf32>
  return %r : tensor<1x16x16x64xf32>
}

// -----

// Transposes that do not undo the rewrite's (here H and W swapped) stay.
// CHECK-LABEL: func.func @other_transposes_stay
// CHECK: linalg.transpose ins(%{{.+}} : tensor<1x16x16x8xf32>) outs(%{{.+}} : tensor<1x8x16x16xf32>) permutation = [0, 3, 2, 1]
// CHECK: linalg.transpose ins(%{{.+}} : tensor<1x8x16x16xf32>) outs(%{{.+}} : tensor<1x16x16x8xf32>) permutation = [0, 2, 3, 1]
// CHECK: linalg.conv_2d_nhwc_hwcf
// CHECK: linalg.transpose ins(%{{.+}} : tensor<1x14x14x64xf32>) outs(%{{.+}} : tensor<1x64x14x14xf32>) permutation = [0, 3, 1, 2]
// CHECK: linalg.transpose ins(%{{.+}} : tensor<1x64x14x14xf32>) outs(%{{.+}} : tensor<1x14x14x64xf32>) permutation = [0, 3, 2, 1]
func.func @other_transposes_stay(%xn: tensor<1x16x16x8xf32>, %w: tensor<64x8x3x3xf32>) -> tensor<1x14x14x64xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %en = tensor.empty() : tensor<1x8x16x16xf32>
  %x = linalg.transpose ins(%xn : tensor<1x16x16x8xf32>) outs(%en : tensor<1x8x16x16xf32>) permutation = [0, 3, 2, 1]
  %e = tensor.empty() : tensor<1x64x14x14xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x64x14x14xf32>) -> tensor<1x64x14x14xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x16x16xf32>, tensor<64x8x3x3xf32>) outs(%f : tensor<1x64x14x14xf32>) -> tensor<1x64x14x14xf32>
  %eo = tensor.empty() : tensor<1x14x14x64xf32>
  %cn = linalg.transpose ins(%c : tensor<1x64x14x14xf32>) outs(%eo : tensor<1x14x14x64xf32>) permutation = [0, 3, 2, 1]
  return %cn : tensor<1x14x14x64xf32>
}

// -----

// A 1x1 convolution of stride 1 between channels-last transposes is the
// product of its NHWC pixels by its filter as [C, F]; one on an NCHW
// input is left to cpu-pointwise-convolutions-to-contractions.
// CHECK-LABEL: func.func @pointwise_between_channels_last_transposes
// CHECK-SAME: (%[[XN:.+]]: tensor<1x14x14x64xf32>, %[[X:.+]]: tensor<1x64x14x14xf32>
// CHECK: %[[W:.+]] = linalg.transpose ins(%{{.+}} : tensor<32x64x1x1xf32>) outs(%{{.+}} : tensor<1x1x64x32xf32>) permutation = [2, 3, 1, 0]
// CHECK: %[[INIT:.+]] = linalg.fill {{.*}} -> tensor<1x14x14x32xf32>
// CHECK: %[[FILTERS:.+]] = tensor.collapse_shape %[[W]] {{\[}}[0, 1, 2], [3]] : tensor<1x1x64x32xf32> into tensor<64x32xf32>
// CHECK: %[[Y:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]
// CHECK-SAME: ins(%[[XN]], %[[FILTERS]] : tensor<1x14x14x64xf32>, tensor<64x32xf32>) outs(%[[INIT]] : tensor<1x14x14x32xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: linalg.conv_2d_nchw_fchw {{.*}}ins(%[[X]]
// CHECK-NOT: linalg.transpose
// CHECK: return %[[Y]]
func.func @pointwise_between_channels_last_transposes(%xn: tensor<1x14x14x64xf32>, %x: tensor<1x64x14x14xf32>, %w: tensor<32x64x1x1xf32>) -> (tensor<1x14x14x32xf32>, tensor<1x32x14x14xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %en = tensor.empty() : tensor<1x64x14x14xf32>
  %t = linalg.transpose ins(%xn : tensor<1x14x14x64xf32>) outs(%en : tensor<1x64x14x14xf32>) permutation = [0, 3, 1, 2]
  %e = tensor.empty() : tensor<1x32x14x14xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x32x14x14xf32>) -> tensor<1x32x14x14xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%t, %w : tensor<1x64x14x14xf32>, tensor<32x64x1x1xf32>) outs(%f : tensor<1x32x14x14xf32>) -> tensor<1x32x14x14xf32>
  %eo = tensor.empty() : tensor<1x14x14x32xf32>
  %cn = linalg.transpose ins(%c : tensor<1x32x14x14xf32>) outs(%eo : tensor<1x14x14x32xf32>) permutation = [0, 2, 3, 1]
  %d = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x64x14x14xf32>, tensor<32x64x1x1xf32>) outs(%f : tensor<1x32x14x14xf32>) -> tensor<1x32x14x14xf32>
  return %cn, %d : tensor<1x14x14x32xf32>, tensor<1x32x14x14xf32>
}
