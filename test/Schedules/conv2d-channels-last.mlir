// A static NCHW convolution, made a channels-last one between transposes
// by cpu-convolutions-to-channels-last (its own test:
// test/Transforms/cpu-convolutions-to-channels-last.mlir), gets a direct
// schedule: threads share the output rows, each register tile is 8
// output pixels x 32 output channels, decomposed by upstream into a 1-D
// convolution and vectorised into FMAs whose accumulators stay in
// registers across the loops over filter rows and input channels.
// RUN: lamina-opt %s --split-input-file --cpu-convolutions-to-channels-last --cpu-schedule='threads=2' | FileCheck %s
// RUN: lamina-opt %s --split-input-file --cpu-convolutions-to-channels-last --cpu-schedule='threads=2' --cpu-apply-schedule --canonicalize | FileCheck %s --check-prefix=TILED

// The padding moves after the input's transpose: the transpose writes the
// interior of a zero-filled NHWC tensor. The convolution, its fill and the
// result's transpose keep the fusion group of the epilogue.
// CHECK-LABEL: func.func @conv_bias_relu
// CHECK-NOT: linalg.conv_2d_nchw_fchw
// CHECK-NOT: tensor.pad
// CHECK: %[[PADDED:.+]] = linalg.fill {{.*}} -> tensor<1x18x18x8xf32>
// CHECK: %[[INTERIOR:.+]] = tensor.extract_slice %[[PADDED]][0, 1, 1, 0] [1, 16, 16, 8] [1, 1, 1, 1]
// CHECK: %[[X:.+]] = linalg.transpose ins(%{{.+}} : tensor<1x8x16x16xf32>) outs(%[[INTERIOR]] : tensor<1x16x16x8xf32>) permutation = [0, 2, 3, 1]
// CHECK: %[[XP:.+]] = tensor.insert_slice %[[X]] into %[[PADDED]][0, 1, 1, 0] [1, 16, 16, 8] [1, 1, 1, 1]
// CHECK: %[[W:.+]] = linalg.transpose ins(%{{.+}} : tensor<64x8x3x3xf32>) outs(%{{.+}} : tensor<3x3x8x64xf32>) permutation = [2, 3, 1, 0]
// CHECK: %[[INIT:.+]] = linalg.fill {{.*}}lamina.fusion_group = "g0"{{.*}} -> tensor<1x16x16x64xf32>
// CHECK: %[[Y:.+]] = linalg.conv_2d_nhwc_hwcf {{.*}}lamina.fusion_group = "g0"{{.*}}lamina.schedule = "[[CONV:conv_bias_relu_g0/[0-9]+]]"
// CHECK-SAME: ins(%[[XP]], %[[W]] : tensor<1x18x18x8xf32>, tensor<3x3x8x64xf32>) outs(%[[INIT]] : tensor<1x16x16x64xf32>)
// CHECK: linalg.transpose ins(%[[Y]] : tensor<1x16x16x64xf32>) outs(%{{.+}} : tensor<1x64x16x16xf32>) permutation = [0, 3, 1, 2]
// CHECK-SAME: lamina.fusion_group = "g0"
// CHECK: arith.maximumf
// The input's transpose: threads share the input's rows, each vectorised
// along the channels (strided reads).
// CHECK: transform.named_sequence @schedule_conv_bias_relu_op0
// CHECK: transform.structured.tile_using_forall {{.*}} tile_sizes [0, 1, 0, 0]
// CHECK: transform.structured.tile_using_for {{.*}} tile_sizes [0, 1, 1, 8]
// The filter's transpose: its input rows are 9 elements, too short to
// share one at a time; threads share blocks of 16 output channels, each
// streaming 16 whole rows of the FCHW filter.
// CHECK: transform.named_sequence @schedule_conv_bias_relu_op1
// CHECK: transform.structured.tile_using_forall {{.*}} tile_sizes [0, 0, 0, 16]
// CHECK: transform.structured.tile_using_for {{.*}} tile_sizes [1, 1, 1, 16]
// CHECK: transform.named_sequence @schedule_conv_bias_relu_g0_convolution
// CHECK: %[[OP:.+]] = transform.structured.match attributes {lamina.schedule = "[[CONV]]"}
// CHECK: %{{.+}}, %[[FORALL:.+]] = transform.structured.tile_using_forall %[[OP]] tile_sizes [0, 8, 0, 0, 0, 0, 0]
// CHECK: transform.structured.fuse_into_containing_op %{{.+}} into %[[FORALL]]
// CHECK: %[[TILE:.+]], %[[LOOPS:.+]]:5 = transform.structured.tile_using_for %{{.+}} tile_sizes [0, 1, 8, 32, 1, 0, 1]
// CHECK: %[[ROW:.+]] = transform.structured.decompose %[[TILE]]
// CHECK: transform.structured.vectorize %[[ROW]]
// CHECK: transform.apply_patterns.vector.reduction_to_contract
// CHECK: transform.apply_patterns.tensor.fold_tensor_subset_ops
// CHECK: transform.loop.hoist_loop_invariant_subsets %[[LOOPS]]#4
// CHECK: transform.loop.hoist_loop_invariant_subsets %[[LOOPS]]#3
// The epilogue (bias, relu): threads share its rows (output channel and
// row; the batch of one is no loop), and the result's transpose back to
// NCHW is computed row by row inside that loop.
// CHECK: transform.named_sequence @schedule_conv_bias_relu_g0(
// CHECK: %[[EPILOGUE:.+]], %[[ROWS:.+]] = transform.structured.tile_using_forall {{.*}} tile_sizes [0, 1, 1, 0]
// CHECK: transform.structured.fuse_into_containing_op %{{.+}} into %[[ROWS]]
// CHECK: transform.structured.tile_using_for {{.*}} tile_sizes [0, 1, 1, 16]
// CHECK: transform.structured.tile_using_for {{.*}} tile_sizes [0, 1, 1, 16]

// Two threads of 8 output rows, each zeroing its rows first; per register
// tile, loops over the 3 filter rows and the 8 input channels carry the
// 8x32 accumulators; the filter's 3 columns are unrolled into
// contractions of one input channel.
// TILED-LABEL: func.func @conv_bias_relu
// TILED-NOT: linalg.conv
// TILED: scf.forall (%{{.+}}) in (2)
// TILED: vector.transfer_write {{.*}} : vector<1x1x1x64xf32>, tensor<1x1x1x64xf32>
// TILED: scf.for %{{.+}} = %c0 to %c16 step %c8
// TILED: scf.for %{{.+}} = %c0 to %c64 step %c32
// TILED: %[[ACC:.+]] = vector.transfer_read {{.*}} : tensor<1x8x16x64xf32>, vector<1x8x32xf32>
// TILED: scf.for %{{.+}} = %c0 to %c3 step %c1 iter_args(%{{.+}} = %[[ACC]]) -> (vector<1x8x32xf32>)
// TILED: scf.for %{{.+}} = %c0 to %c8 step %c1 iter_args({{.*}}) -> (vector<1x8x32xf32>)
// TILED-COUNT-3: vector.contract {{.*}} : vector<1x8x1xf32>, vector<1x32xf32> into vector<1x8x32xf32>
// TILED: vector.transfer_write {{.*}} : vector<1x8x32xf32>, tensor<1x8x16x64xf32>
// TILED-NOT: transform.

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
// transposed like the input; the threads share the batch of two, and a
// register tile covers a whole output row (5 pixels) x all 12 channels.
// CHECK-LABEL: func.func @dilated_strided_accumulating
// CHECK: %[[INIT:.+]] = linalg.transpose ins(%{{.+}} : tensor<2x12x7x5xf32>) outs(%{{.+}} : tensor<2x7x5x12xf32>) permutation = [0, 2, 3, 1]
// CHECK: linalg.conv_2d_nhwc_hwcf {dilations = dense<2> : tensor<2xi64>, {{.*}}strides = dense<[1, 2]> : tensor<2xi64>}
// CHECK-SAME: outs(%[[INIT]] : tensor<2x7x5x12xf32>)
// CHECK: transform.named_sequence @schedule_dilated_strided_accumulating_op{{[0-9]+}}_convolution
// CHECK: transform.structured.tile_using_forall {{.*}} tile_sizes [1, 0, 0, 0, 0, 0, 0]
// CHECK: transform.structured.tile_using_for {{.*}} tile_sizes [0, 1, 0, 0, 1, 0, 1]

// TILED-LABEL: func.func @dilated_strided_accumulating
// TILED-NOT: linalg.conv
// TILED: scf.forall (%{{.+}}) in (2)
// TILED: vector.contract {{.*}} into vector<1x1x12xf32>

func.func @dilated_strided_accumulating(%x: tensor<2x3x11x13xf32>, %w: tensor<12x3x3x3xf32>, %acc: tensor<2x12x7x5xf32>) -> tensor<2x12x7x5xf32> {
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<2> : tensor<2xi64>, strides = dense<[1, 2]> : tensor<2xi64>} ins(%x, %w : tensor<2x3x11x13xf32>, tensor<12x3x3x3xf32>) outs(%acc : tensor<2x12x7x5xf32>) -> tensor<2x12x7x5xf32>
  return %c : tensor<2x12x7x5xf32>
}

// -----

// A convolution on dynamic shapes is left as it is (the loops stage makes
// it scalar loops).
// CHECK-LABEL: func.func @dynamic
// CHECK: linalg.conv_2d_nchw_fchw
// CHECK-NOT: linalg.conv_2d_nhwc_hwcf
// CHECK-NOT: transform.structured.decompose

func.func @dynamic(%x: tensor<?x3x9x9xf32>, %w: tensor<4x3x3x3xf32>, %acc: tensor<?x4x7x7xf32>) -> tensor<?x4x7x7xf32> {
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<?x3x9x9xf32>, tensor<4x3x3x3xf32>) outs(%acc : tensor<?x4x7x7xf32>) -> tensor<?x4x7x7xf32>
  return %c : tensor<?x4x7x7xf32>
}

// -----

// A constant filter is transposed at compile time: no transpose of it
// runs at each call. (A 1x1 filter of stride 1 would make the convolution
// a matrix product, see conv2d-grouped-pointwise.mlir; this one has
// stride 2.)
// CHECK-LABEL: func.func @constant_filter
// CHECK-NOT: linalg.transpose ins(%{{.+}} : tensor<2x2x1x1xf32>)
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

// A row of 19 output pixels (no tile of 5 to 8 divides it) is split
// inside the threads' loop: 16 pixels in 8-pixel tiles, then one tile of
// the last 3, each decomposed and vectorised.
// CHECK-LABEL: func.func @split_row
// CHECK: transform.named_sequence @schedule_split_row_op{{[0-9]+}}_convolution
// CHECK: %[[T:.+]], %{{.+}} = transform.structured.tile_using_forall {{.*}} tile_sizes [0, 2, 0, 0, 0, 0, 0]
// CHECK: %[[BOTH:.+]] = transform.structured.split %[[T]] after 16 {dimension = 2 : i64}
// CHECK: %[[MAIN:.+]]:2 = transform.split_handle %[[BOTH]]
// CHECK: transform.structured.tile_using_for %[[MAIN]]#0 tile_sizes [0, 1, 8, 0, 1, 0, 1]
// CHECK: transform.structured.tile_using_for %[[MAIN]]#1 tile_sizes [0, 1, 0, 0, 1, 0, 1]

// TILED-LABEL: func.func @split_row
// TILED-NOT: linalg.conv
// TILED: vector.contract {{.*}} into vector<1x8x16xf32>
// TILED: vector.contract {{.*}} into vector<1x3x16xf32>

func.func @split_row(%x: tensor<1x4x5x21xf32>, %w: tensor<16x4x3x3xf32>, %acc: tensor<1x16x3x19xf32>) -> tensor<1x16x3x19xf32> {
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x4x5x21xf32>, tensor<16x4x3x3xf32>) outs(%acc : tensor<1x16x3x19xf32>) -> tensor<1x16x3x19xf32>
  return %c : tensor<1x16x3x19xf32>
}
