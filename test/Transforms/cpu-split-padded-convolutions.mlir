// RUN: lamina-opt %s --split-input-file --cpu-split-padded-convolutions | FileCheck %s
// RUN: lamina-opt %s --split-input-file --cpu-split-padded-convolutions='tile-pixels=8' | FileCheck %s --check-prefix=CUT

// Depthwise 3x3 of 16x16 pixels padded by 1, with its bias and relu: the
// top and bottom rows (over the whole width) and the left and right
// columns of the 14 rows between them pad the few input rows and columns
// they read; the 14x14 interior convolves a slice of the input itself.
// Each part has its own fill and epilogue, inserted into the epilogue's
// destination; the whole tensor.pad is gone.
// CHECK-LABEL: func.func @depthwise_bias_relu
// CHECK-NOT: tensor.pad %arg0
// CHECK: %[[DEST:.+]] = tensor.empty() : tensor<1x16x16x32xf32>
// CHECK: %[[TOP:.+]] = tensor.extract_slice %arg0[0, 0, 0, 0] [1, 2, 16, 32] [1, 1, 1, 1]
// CHECK: tensor.pad %[[TOP]] low[0, 1, 1, 0] high[0, 0, 1, 0]
// CHECK: linalg.fill {{.*}} -> tensor<1x1x16x32xf32>
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc {{.*}} ins(%{{.+}}, %arg1 : tensor<1x3x18x32xf32>, tensor<3x3x32xf32>)
// CHECK: %[[TOP_OUT:.+]] = tensor.extract_slice %[[DEST]][0, 0, 0, 0] [1, 1, 16, 32]
// CHECK: %[[TOP_EPILOGUE:.+]] = linalg.generic {{.*}} outs(%[[TOP_OUT]] : tensor<1x1x16x32xf32>)
// CHECK: arith.maximumf
// CHECK: %[[WITH_TOP:.+]] = tensor.insert_slice %[[TOP_EPILOGUE]] into %[[DEST]][0, 0, 0, 0] [1, 1, 16, 32]
// CHECK: %[[LEFT:.+]] = tensor.extract_slice %arg0[0, 0, 0, 0] [1, 16, 2, 32] [1, 1, 1, 1]
// CHECK: tensor.pad %[[LEFT]] low[0, 0, 1, 0] high[0, 0, 0, 0]
// CHECK: %[[WITH_LEFT:.+]] = tensor.insert_slice %{{.+}} into %[[WITH_TOP]][0, 1, 0, 0] [1, 14, 1, 32]
// CHECK: %[[INTERIOR:.+]] = tensor.extract_slice %arg0[0, 0, 0, 0] [1, 16, 16, 32] [1, 1, 1, 1]
// CHECK-NOT: tensor.pad
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc {{.*}} ins(%[[INTERIOR]], %arg1 : tensor<1x16x16x32xf32>, tensor<3x3x32xf32>) {{.*}} -> tensor<1x14x14x32xf32>
// CHECK: %[[WITH_INTERIOR:.+]] = tensor.insert_slice %{{.+}} into %[[WITH_LEFT]][0, 1, 1, 0] [1, 14, 14, 32]
// CHECK: %[[RIGHT:.+]] = tensor.extract_slice %arg0[0, 0, 14, 0] [1, 16, 2, 32] [1, 1, 1, 1]
// CHECK: tensor.pad %[[RIGHT]] low[0, 0, 0, 0] high[0, 0, 1, 0]
// CHECK: %[[WITH_RIGHT:.+]] = tensor.insert_slice %{{.+}} into %[[WITH_INTERIOR]][0, 1, 15, 0] [1, 14, 1, 32]
// CHECK: %[[BOTTOM:.+]] = tensor.extract_slice %arg0[0, 14, 0, 0] [1, 2, 16, 32] [1, 1, 1, 1]
// CHECK: tensor.pad %[[BOTTOM]] low[0, 0, 1, 0] high[0, 1, 1, 0]
// CHECK: %[[ALL:.+]] = tensor.insert_slice %{{.+}} into %[[WITH_RIGHT]][0, 15, 0, 0] [1, 1, 16, 32]
// CHECK: return %[[ALL]]

// With 8-pixel register tiles, border parts half a tile wide (a column
// alone would be computed one pixel at a time) would hold 56% of the
// outputs: too many, the convolution is left as it is.
// CUT-LABEL: func.func @depthwise_bias_relu
// CUT: tensor.pad %arg0 low[0, 1, 1, 0] high[0, 1, 1, 0]
// CUT-NOT: tensor.insert_slice
// CUT: return

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#channel = affine_map<(d0, d1, d2, d3) -> (d3)>
func.func @depthwise_bias_relu(%x: tensor<1x16x16x32xf32>, %w: tensor<3x3x32xf32>, %b: tensor<32xf32>) -> tensor<1x16x16x32xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %padded = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %cst : f32
  } : tensor<1x16x16x32xf32> to tensor<1x18x18x32xf32>
  %e = tensor.empty() : tensor<1x16x16x32xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x16x16x32xf32>) -> tensor<1x16x16x32xf32>
  %c = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%padded, %w : tensor<1x18x18x32xf32>, tensor<3x3x32xf32>) outs(%f : tensor<1x16x16x32xf32>) -> tensor<1x16x16x32xf32>
  %r = linalg.generic {indexing_maps = [#id, #channel, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %b : tensor<1x16x16x32xf32>, tensor<32xf32>) outs(%e : tensor<1x16x16x32xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    %m = arith.maximumf %s, %cst : f32
    linalg.yield %m : f32
  } -> tensor<1x16x16x32xf32>
  return %r : tensor<1x16x16x32xf32>
}

// -----

// Stride 2 on 16x16 pixels padded by 1: only the first output row and
// column read the padding (the last windows end on the input's last row
// and column), so there are three parts: the top row, the left column and
// the 7x7 interior, which reads rows and columns 1 to 15 in place. No
// epilogue: each part's convolution is inserted itself.
// CHECK-LABEL: func.func @strided
// CHECK: tensor.extract_slice %arg0[0, 0, 0, 0] [1, 2, 16, 16]
// CHECK: tensor.pad %{{.+}} low[0, 1, 1, 0] high[0, 0, 0, 0]
// CHECK: to tensor<1x3x17x16xf32>
// CHECK: tensor.insert_slice %{{.+}}[0, 0, 0, 0] [1, 1, 8, 16]
// CHECK: tensor.pad %{{.+}} low[0, 0, 1, 0] high[0, 0, 0, 0]
// CHECK: tensor.insert_slice %{{.+}}[0, 1, 0, 0] [1, 7, 1, 16]
// CHECK: %[[INTERIOR:.+]] = tensor.extract_slice %arg0[0, 1, 1, 0] [1, 15, 15, 16]
// CHECK-NEXT: tensor.empty
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: linalg.depthwise_conv_2d_nhwc_hwc {{.*}} ins(%[[INTERIOR]], %arg1
// CHECK-NEXT: %[[ALL:.+]] = tensor.insert_slice %{{.+}}[0, 1, 1, 0] [1, 7, 7, 16]
// CHECK-NEXT: return %[[ALL]]

func.func @strided(%x: tensor<1x16x16x16xf32>, %w: tensor<3x3x16xf32>) -> tensor<1x8x8x16xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %padded = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %cst : f32
  } : tensor<1x16x16x16xf32> to tensor<1x18x18x16xf32>
  %e = tensor.empty() : tensor<1x8x8x16xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  %c = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%padded, %w : tensor<1x18x18x16xf32>, tensor<3x3x16xf32>) outs(%f : tensor<1x8x8x16xf32>) -> tensor<1x8x8x16xf32>
  return %c : tensor<1x8x8x16xf32>
}

// -----

// 28 columns padded by 1: without a tile, the border columns alone and
// the 26 between them; with 8-pixel tiles, border parts of 4 columns and
// an interior of 20 (5-pixel tiles).
// CUT-LABEL: func.func @cut_interior
// CUT: tensor.insert_slice %{{.+}}[0, 1, 0, 0] [1, 26, 4, 8]
// CUT: %[[INTERIOR:.+]] = tensor.extract_slice %arg0[0, 0, 3, 0] [1, 28, 22, 8]
// CUT-NOT: tensor.pad
// CUT: linalg.depthwise_conv_2d_nhwc_hwc {{.*}} ins(%[[INTERIOR]], %arg1
// CUT: tensor.insert_slice %{{.+}}[0, 1, 4, 0] [1, 26, 20, 8]
// CUT: tensor.extract_slice %arg0[0, 0, 23, 0] [1, 28, 5, 8]
// CUT: tensor.pad %{{.+}} low[0, 0, 0, 0] high[0, 0, 1, 0]
// CUT: tensor.insert_slice %{{.+}}[0, 1, 24, 0] [1, 26, 4, 8]
// CHECK-LABEL: func.func @cut_interior
// CHECK: tensor.insert_slice %{{.+}}[0, 1, 1, 0] [1, 26, 26, 8]

func.func @cut_interior(%x: tensor<1x28x28x8xf32>, %w: tensor<3x3x8xf32>) -> tensor<1x28x28x8xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %padded = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %cst : f32
  } : tensor<1x28x28x8xf32> to tensor<1x30x30x8xf32>
  %e = tensor.empty() : tensor<1x28x28x8xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x28x28x8xf32>) -> tensor<1x28x28x8xf32>
  %c = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%padded, %w : tensor<1x30x30x8xf32>, tensor<3x3x8xf32>) outs(%f : tensor<1x28x28x8xf32>) -> tensor<1x28x28x8xf32>
  return %c : tensor<1x28x28x8xf32>
}

// -----

// Negative cases: no padding (nothing to split), a padding of the
// channels (not the rows and columns), 7x7 pixels, of whose outputs too
// many (24 of 49) meet the padding, and a 5x5 filter (more than 9 taps)
// are left as they are.
// CHECK-LABEL: func.func @unpadded
// CHECK-NOT: tensor.insert_slice
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc
// CHECK-NOT: tensor.insert_slice
// CHECK-LABEL: func.func @channels_padded
// CHECK: tensor.pad %arg0 low[0, 0, 0, 1]
// CHECK-NOT: tensor.insert_slice
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc
// CHECK-NOT: tensor.insert_slice
// CHECK-LABEL: func.func @small
// CHECK: tensor.pad %arg0 low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK-NOT: tensor.insert_slice
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc
// CHECK-NOT: tensor.insert_slice
// CHECK-LABEL: func.func @many_taps
// CHECK: tensor.pad %arg0 low[0, 2, 2, 0] high[0, 2, 2, 0]
// CHECK-NOT: tensor.insert_slice
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc
// CHECK-NOT: tensor.insert_slice

func.func @unpadded(%x: tensor<1x10x10x8xf32>, %w: tensor<3x3x8xf32>) -> tensor<1x8x8x8xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<1x8x8x8xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %c = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x10x10x8xf32>, tensor<3x3x8xf32>) outs(%f : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return %c : tensor<1x8x8x8xf32>
}

func.func @channels_padded(%x: tensor<1x10x10x7xf32>, %w: tensor<3x3x8xf32>) -> tensor<1x8x8x8xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %padded = tensor.pad %x low[0, 0, 0, 1] high[0, 0, 0, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %cst : f32
  } : tensor<1x10x10x7xf32> to tensor<1x10x10x8xf32>
  %e = tensor.empty() : tensor<1x8x8x8xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %c = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%padded, %w : tensor<1x10x10x8xf32>, tensor<3x3x8xf32>) outs(%f : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return %c : tensor<1x8x8x8xf32>
}

func.func @small(%x: tensor<1x7x7x64xf32>, %w: tensor<3x3x64xf32>) -> tensor<1x7x7x64xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %padded = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %cst : f32
  } : tensor<1x7x7x64xf32> to tensor<1x9x9x64xf32>
  %e = tensor.empty() : tensor<1x7x7x64xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x7x7x64xf32>) -> tensor<1x7x7x64xf32>
  %c = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%padded, %w : tensor<1x9x9x64xf32>, tensor<3x3x64xf32>) outs(%f : tensor<1x7x7x64xf32>) -> tensor<1x7x7x64xf32>
  return %c : tensor<1x7x7x64xf32>
}

func.func @many_taps(%x: tensor<1x32x32x16xf32>, %w: tensor<5x5x16xf32>) -> tensor<1x32x32x16xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %padded = tensor.pad %x low[0, 2, 2, 0] high[0, 2, 2, 0] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %cst : f32
  } : tensor<1x32x32x16xf32> to tensor<1x36x36x16xf32>
  %e = tensor.empty() : tensor<1x32x32x16xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x32x32x16xf32>) -> tensor<1x32x32x16xf32>
  %c = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%padded, %w : tensor<1x36x36x16xf32>, tensor<5x5x16xf32>) outs(%f : tensor<1x32x32x16xf32>) -> tensor<1x32x32x16xf32>
  return %c : tensor<1x32x32x16xf32>
}
