// RUN: lamina-opt %s --split-input-file --cpu-grouped-convolutions-to-taps | FileCheck %s
// RUN: lamina-opt %s --split-input-file --cpu-grouped-convolutions-to-taps='max-taps=8' | FileCheck %s --check-prefix=FEW

// Depthwise 3x3, padded by 1: eight windows of the padded input and the
// centre one of the input itself (it lies inside it), nine [8, 1, 1]
// weight slices; no convolution left, and the tensor.pad is left without
// uses (canonicalization erases it).
// CHECK-LABEL: func.func @depthwise
// CHECK: %[[ALLOC:.+]] = bufferization.alloc_tensor() : tensor<1x8x18x18xf32>
// CHECK: %[[FILLED:.+]] = linalg.fill {{.*}} outs(%[[ALLOC]] : tensor<1x8x18x18xf32>)
// CHECK: %[[INTERIOR:.+]] = tensor.extract_slice %[[FILLED]][0, 0, 1, 1] [1, 8, 16, 16] [1, 1, 1, 1]
// CHECK: %[[COPY:.+]] = linalg.copy {{.*}}ins(%arg0 : tensor<1x8x16x16xf32>) outs(%[[INTERIOR]] : tensor<1x8x16x16xf32>)
// CHECK: %[[PADDED:.+]] = tensor.insert_slice %[[COPY]] into %[[FILLED]][0, 0, 1, 1] [1, 8, 16, 16] [1, 1, 1, 1]
// CHECK: %[[TAPS:.+]] = tensor.collapse_shape %arg1 {{\[}}[0], [1], [2, 3, 4]] : tensor<8x1x1x3x3xf32> into tensor<8x1x9xf32>
// CHECK: tensor.extract_slice %{{.+}}[0, 0, 0, 0] [1, 8, 16, 16] [1, 1, 1, 1]
// CHECK: tensor.extract_slice %{{.+}}[0, 0, 2, 2] [1, 8, 16, 16] [1, 1, 1, 1]
// CHECK: tensor.extract_slice %[[TAPS]][0, 0, 0] [8, 1, 1] [1, 1, 1] : tensor<8x1x9xf32> to tensor<8x1x1xf32>
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]
// CHECK-COUNT-9: arith.mulf {{.*}} fastmath<contract> : f32
// CHECK-NOT: linalg.conv

// With at most 8 taps, a 3x3 filter is left as it is.
// FEW-LABEL: func.func @depthwise
// FEW: linalg.conv_2d_ngchw_gfchw
// FEW-NOT: linalg.generic

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

// A grouped convolution of integers, and one on dynamic shapes, are left
// as they are.
// CHECK-LABEL: func.func @integers
// CHECK: linalg.conv_2d_ngchw_gfchw
// CHECK-NOT: linalg.generic
// CHECK-LABEL: func.func @dynamic
// CHECK: linalg.conv_2d_ngchw_gfchw
// CHECK-NOT: linalg.generic

func.func @integers(%x: tensor<1x2x1x5x5xi32>, %w: tensor<2x1x1x3x3xi32>, %acc: tensor<1x2x1x3x3xi32>) -> tensor<1x2x1x3x3xi32> {
  %c = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x2x1x5x5xi32>, tensor<2x1x1x3x3xi32>) outs(%acc : tensor<1x2x1x3x3xi32>) -> tensor<1x2x1x3x3xi32>
  return %c : tensor<1x2x1x3x3xi32>
}

func.func @dynamic(%x: tensor<?x2x1x5x5xf32>, %w: tensor<2x1x1x3x3xf32>, %acc: tensor<?x2x1x3x3xf32>) -> tensor<?x2x1x3x3xf32> {
  %c = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<?x2x1x5x5xf32>, tensor<2x1x1x3x3xf32>) outs(%acc : tensor<?x2x1x3x3xf32>) -> tensor<?x2x1x3x3xf32>
  return %c : tensor<?x2x1x3x3xf32>
}
