// Convolutions that are not run channels last, and their schedules. A
// grouped or depthwise convolution becomes one elementwise generic over the
// output (cpu-grouped-convolutions-to-taps): per filter tap, the input
// window the tap meets times the tap's weights, summed into FMAs; its
// padding an allocation filled and copied into by scheduled ops. A 1x1
// convolution of stride 1 becomes the matrix product it is in NCHW
// (cpu-pointwise-convolutions-to-contractions), scheduled as a packed
// contraction. The rewrites' own tests are in test/Transforms.
// RUN: lamina-opt %s --split-input-file --cpu-pointwise-convolutions-to-contractions --cpu-grouped-convolutions-to-taps --cpu-schedule='threads=2' --canonicalize | FileCheck %s

// Depthwise 3x3, padded by 1: eight windows of the padded input and the
// centre one of the input itself (it lies inside it), nine [8, 1, 1]
// weight slices, no convolution and no tensor.pad left.
// CHECK-LABEL: func.func @depthwise
// CHECK-NOT: tensor.pad
// CHECK: %[[ALLOC:.+]] = bufferization.alloc_tensor() : tensor<1x8x18x18xf32>
// CHECK: %[[FILLED:.+]] = linalg.fill {{.*}} outs(%[[ALLOC]] : tensor<1x8x18x18xf32>)
// CHECK: %[[INTERIOR:.+]] = tensor.extract_slice %[[FILLED]][0, 0, 1, 1] [1, 8, 16, 16] [1, 1, 1, 1]
// CHECK: %[[COPY:.+]] = linalg.copy {{.*}} ins(%arg0 : tensor<1x8x16x16xf32>) outs(%[[INTERIOR]] : tensor<1x8x16x16xf32>)
// CHECK: %[[PADDED:.+]] = tensor.insert_slice %[[COPY]] into %[[FILLED]][0, 0, 1, 1] [1, 8, 16, 16] [1, 1, 1, 1]
// CHECK: %[[TAPS:.+]] = tensor.collapse_shape %arg1 {{\[}}[0], [1], [2, 3, 4]] : tensor<8x1x1x3x3xf32> into tensor<8x1x9xf32>
// CHECK: %[[W00:.+]] = tensor.extract_slice %[[PADDED]][0, 0, 0, 0] [1, 8, 16, 16] [1, 1, 1, 1]
// CHECK: %[[W22:.+]] = tensor.extract_slice %[[PADDED]][0, 0, 2, 2] [1, 8, 16, 16] [1, 1, 1, 1]
// CHECK: %[[K0:.+]] = tensor.extract_slice %[[TAPS]][0, 0, 0] [8, 1, 1] [1, 1, 1] : tensor<8x1x9xf32> to tensor<8x1x1xf32>
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]
// CHECK-SAME: ins(%[[W00]], {{.*}}, %arg0, {{.*}}, %[[W22]], %[[K0]],
// CHECK-COUNT-9: arith.mulf {{.*}} fastmath<contract> : f32
// CHECK-NOT: linalg.conv
// CHECK: transform.named_sequence @schedule_depthwise_op

func.func @depthwise(%x: tensor<1x8x16x16xf32>, %w: tensor<8x1x1x3x3xf32>) -> tensor<1x8x1x16x16xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %cst : f32
  } : tensor<1x8x16x16xf32> to tensor<1x8x18x18xf32>
  %xe = tensor.expand_shape %padded [[0], [1, 2], [3], [4]] output_shape [1, 8, 1, 18, 18] : tensor<1x8x18x18xf32> into tensor<1x8x1x18x18xf32>
  %e = tensor.empty() : tensor<1x8x1x16x16xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x8x1x16x16xf32>) -> tensor<1x8x1x16x16xf32>
  %c = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%xe, %w : tensor<1x8x1x18x18xf32>, tensor<8x1x1x3x3xf32>) outs(%f : tensor<1x8x1x16x16xf32>) -> tensor<1x8x1x16x16xf32>
  return %c : tensor<1x8x1x16x16xf32>
}

// -----

// Two groups of 8 channels with 3x3 filters: 72 taps, more than 64, so the
// channels stay a reduction loop (the sixth); each of the 9 windows is
// [N, G, C, OH, OW], strided by 2 along the rows and columns.
// CHECK-LABEL: func.func @grouped
// CHECK: %[[TAPS:.+]] = tensor.collapse_shape %arg1 {{\[}}[0], [1], [2], [3, 4]] : tensor<2x4x8x3x3xf32> into tensor<2x4x8x9xf32>
// CHECK: tensor.extract_slice %arg0[0, 0, 0, 0, 0] [1, 2, 8, 4, 4] [1, 1, 1, 2, 2]
// CHECK: tensor.extract_slice %[[TAPS]][0, 0, 0, 8] [2, 4, 8, 1] [1, 1, 1, 1]
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]
// CHECK-COUNT-9: arith.mulf
// CHECK-NOT: linalg.conv

func.func @grouped(%x: tensor<1x2x8x9x9xf32>, %w: tensor<2x4x8x3x3xf32>) -> tensor<1x2x4x4x4xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<1x2x4x4x4xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x2x4x4x4xf32>) -> tensor<1x2x4x4x4xf32>
  %c = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x2x8x9x9xf32>, tensor<2x4x8x3x3xf32>) outs(%f : tensor<1x2x4x4x4xf32>) -> tensor<1x2x4x4x4xf32>
  return %c : tensor<1x2x4x4x4xf32>
}

// -----

// A 1x1 convolution of stride 1: out[f, p] += w[f, c] * x[c, p] over the
// image's 256 pixels, scheduled as a packed contraction; no transpose.
// CHECK-LABEL: func.func @pointwise
// CHECK-DAG: %[[X:.+]] = tensor.collapse_shape %arg0 {{\[}}[0, 1], [2, 3]] : tensor<1x24x16x16xf32> into tensor<24x256xf32>
// CHECK-DAG: %[[W:.+]] = tensor.collapse_shape %arg1 {{\[}}[0], [1, 2, 3]] : tensor<48x24x1x1xf32> into tensor<48x24xf32>
// CHECK: %[[P:.+]] = linalg.generic {indexing_maps = [#[[A:.+]], #[[B:.+]], #[[C:.+]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[W]], %[[X]] : tensor<48x24xf32>, tensor<24x256xf32>)
// CHECK: tensor.expand_shape %[[P]] {{\[}}[0, 1], [2, 3]] output_shape [1, 48, 16, 16]
// CHECK-NOT: linalg.transpose

// A batch of images: the filter is shared by them (a batch dim it lacks).
// CHECK-LABEL: func.func @pointwise_batch
// CHECK: %[[X:.+]] = tensor.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : tensor<3x24x4x4xf32> into tensor<3x24x16xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK-SAME: ins(%{{.+}}, %[[X]] : tensor<8x24xf32>, tensor<3x24x16xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: transform.named_sequence @schedule_pointwise_op{{[0-9]+}}_contraction
// CHECK: transform.structured.pack
// CHECK: transform.named_sequence @schedule_pointwise_batch_op{{[0-9]+}}_contraction
// CHECK: transform.structured.pack

func.func @pointwise(%x: tensor<1x24x16x16xf32>, %w: tensor<48x24x1x1xf32>) -> tensor<1x48x16x16xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<1x48x16x16xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x48x16x16xf32>) -> tensor<1x48x16x16xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x24x16x16xf32>, tensor<48x24x1x1xf32>) outs(%f : tensor<1x48x16x16xf32>) -> tensor<1x48x16x16xf32>
  return %c : tensor<1x48x16x16xf32>
}

func.func @pointwise_batch(%x: tensor<3x24x4x4xf32>, %w: tensor<8x24x1x1xf32>) -> tensor<3x8x4x4xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<3x8x4x4xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<3x8x4x4xf32>) -> tensor<3x8x4x4xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<3x24x4x4xf32>, tensor<8x24x1x1xf32>) outs(%f : tensor<3x8x4x4xf32>) -> tensor<3x8x4x4xf32>
  return %c : tensor<3x8x4x4xf32>
}
