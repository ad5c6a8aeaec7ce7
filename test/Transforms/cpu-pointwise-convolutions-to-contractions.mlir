// RUN: lamina-opt %s --split-input-file --cpu-pointwise-convolutions-to-contractions | FileCheck %s

// A 1x1 convolution of stride 1: out[f, p] += w[f, c] * x[c, p] over the
// image's 256 pixels, the filter the left operand; the zero fill of the
// result becomes one of the collapsed shape. No transpose.
// CHECK-LABEL: func.func @pointwise
// CHECK-DAG: %[[X:.+]] = tensor.collapse_shape %arg0 {{\[}}[0, 1], [2, 3]] : tensor<1x24x16x16xf32> into tensor<24x256xf32>
// CHECK-DAG: %[[W:.+]] = tensor.collapse_shape %arg1 {{\[}}[0], [1, 2, 3]] : tensor<48x24x1x1xf32> into tensor<48x24xf32>
// CHECK-DAG: %[[INIT:.+]] = linalg.fill {{.*}} -> tensor<48x256xf32>
// CHECK: %[[P:.+]] = linalg.generic {indexing_maps = [#[[A:.+]], #[[B:.+]], #[[C:.+]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[W]], %[[X]] : tensor<48x24xf32>, tensor<24x256xf32>) outs(%[[INIT]] : tensor<48x256xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: tensor.expand_shape %[[P]] {{\[}}[0, 1], [2, 3]] output_shape [1, 48, 16, 16]
// CHECK-NOT: linalg.transpose
// CHECK-NOT: linalg.conv

func.func @pointwise(%x: tensor<1x24x16x16xf32>, %w: tensor<48x24x1x1xf32>) -> tensor<1x48x16x16xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<1x48x16x16xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<1x48x16x16xf32>) -> tensor<1x48x16x16xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x24x16x16xf32>, tensor<48x24x1x1xf32>) outs(%f : tensor<1x48x16x16xf32>) -> tensor<1x48x16x16xf32>
  return %c : tensor<1x48x16x16xf32>
}

// -----

// A batch of images: the filter is shared by them (a batch dim it lacks).
// CHECK-LABEL: func.func @pointwise_batch
// CHECK: %[[X:.+]] = tensor.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]] : tensor<3x24x4x4xf32> into tensor<3x24x16xf32>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK-SAME: ins(%{{.+}}, %[[X]] : tensor<8x24xf32>, tensor<3x24x16xf32>)
// CHECK-NOT: linalg.transpose

func.func @pointwise_batch(%x: tensor<3x24x4x4xf32>, %w: tensor<8x24x1x1xf32>) -> tensor<3x8x4x4xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<3x8x4x4xf32>
  %f = linalg.fill ins(%cst : f32) outs(%e : tensor<3x8x4x4xf32>) -> tensor<3x8x4x4xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<3x24x4x4xf32>, tensor<8x24x1x1xf32>) outs(%f : tensor<3x8x4x4xf32>) -> tensor<3x8x4x4xf32>
  return %c : tensor<3x8x4x4xf32>
}

// -----

// Not pointwise: a 1x1 filter of stride 2, a padded input, a 3x3 filter.
// CHECK-LABEL: func.func @strided
// CHECK: linalg.conv_2d_nchw_fchw
// CHECK-NOT: linalg.generic
// CHECK-LABEL: func.func @padded
// CHECK: tensor.pad
// CHECK: linalg.conv_2d_nchw_fchw
// CHECK-NOT: linalg.generic
// CHECK-LABEL: func.func @three_by_three
// CHECK: linalg.conv_2d_nchw_fchw
// CHECK-NOT: linalg.generic

func.func @strided(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x1x1xf32>, %acc: tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32> {
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<1x4x8x8xf32>, tensor<8x4x1x1xf32>) outs(%acc : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  return %c : tensor<1x8x4x4xf32>
}

func.func @padded(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x1x1xf32>, %acc: tensor<1x8x10x10xf32>) -> tensor<1x8x10x10xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %padded = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %cst : f32
  } : tensor<1x4x8x8xf32> to tensor<1x4x10x10xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%padded, %w : tensor<1x4x10x10xf32>, tensor<8x4x1x1xf32>) outs(%acc : tensor<1x8x10x10xf32>) -> tensor<1x8x10x10xf32>
  return %c : tensor<1x8x10x10xf32>
}

func.func @three_by_three(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>, %acc: tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32> {
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>) outs(%acc : tensor<1x8x6x6xf32>) -> tensor<1x8x6x6xf32>
  return %c : tensor<1x8x6x6xf32>
}

// -----

// An i8 convolution's contraction sign-extends both operands to its i32
// result, as the named convolution does.
// CHECK-LABEL: func.func @pointwise_i8
// CHECK: linalg.generic {{.+}} ins(%{{.+}}, %{{.+}} : tensor<32x64xi8>, tensor<64x49xi8>) outs(%{{.+}} : tensor<32x49xi32>)
// CHECK: arith.extsi %{{.+}} : i8 to i32
// CHECK: arith.extsi %{{.+}} : i8 to i32
// CHECK: arith.muli
// CHECK: arith.addi
// CHECK-NOT: linalg.conv_2d_nchw_fchw
func.func @pointwise_i8(%x: tensor<1x64x7x7xi8>, %w: tensor<32x64x1x1xi8>) -> tensor<1x32x7x7xi32> {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<1x32x7x7xi32>
  %f = linalg.fill ins(%zero : i32) outs(%e : tensor<1x32x7x7xi32>) -> tensor<1x32x7x7xi32>
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x64x7x7xi8>, tensor<32x64x1x1xi8>) outs(%f : tensor<1x32x7x7xi32>) -> tensor<1x32x7x7xi32>
  return %y : tensor<1x32x7x7xi32>
}
