// RUN: lamina-opt %s --split-input-file --nn-fold-batch-norm | FileCheck %s
// RUN: lamina-opt %s --split-input-file --nn-fold-batch-norm --nn-fold-constants | FileCheck %s --check-prefix=FOLD

// A batch norm of constant statistics after a convolution of a constant
// filter: the scale moves into the filter, the shift stays an addition;
// with nn-fold-constants, the scaled filter is a new constant.
// CHECK-LABEL: func.func @conv_batch_norm
// CHECK-SAME: (%[[X:.+]]: tensor<1x1x3x3xf32>)
// CHECK: %[[W:.+]] = arith.constant dense<1.000000e+00> : tensor<2x1x1x1xf32>
// CHECK: arith.constant dense<[2.000000e+00, 3.000000e+00]> : tensor<2xf32>
// CHECK: %[[SR:.+]] = "nn.reshape"(%{{.+}}) : (tensor<2x1x1xf32>) -> tensor<2x1x1x1xf32>
// CHECK: %[[WS:.+]] = "nn.mul"(%[[W]], %[[SR]])
// CHECK: %[[C:.+]] = "nn.conv2d"(%[[X]], %[[WS]])
// CHECK-NOT: "nn.mul"
// CHECK: "nn.add"(%[[C]],
// FOLD-LABEL: func.func @conv_batch_norm
// FOLD: %[[WS:.+]] = arith.constant dense<{{\[\[\[}}[2.000000e+00]]], {{\[\[\[}}3.000000e+00]]]]> : tensor<2x1x1x1xf32>
// FOLD-NOT: "nn.mul"
// FOLD: "nn.conv2d"(%{{.+}}, %[[WS]])
func.func @conv_batch_norm(%x: tensor<1x1x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %w = arith.constant dense<1.0> : tensor<2x1x1x1xf32>
  %scale = arith.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %shift = arith.constant dense<[0.5, -0.5]> : tensor<2xf32>
  %y = "nn.conv2d"(%x, %w) : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %s = "nn.reshape"(%scale) : (tensor<2xf32>) -> tensor<2x1x1xf32>
  %t = "nn.reshape"(%shift) : (tensor<2xf32>) -> tensor<2x1x1xf32>
  %0 = "nn.mul"(%y, %s) : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %1 = "nn.add"(%0, %t) : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  return %1 : tensor<1x2x3x3xf32>
}

// -----

// Bound weights and statistics, and a bias: the scale, computed from
// bound arguments, scales the filter and the bias.
// CHECK-LABEL: func.func @bound_conv_bias
// CHECK-SAME: (%[[X:.+]]: tensor<1x2x4x4xf32>, %[[W:.+]]: tensor<2x1x3x3xf32> {lamina.bound}, %[[B:.+]]: tensor<2xf32> {lamina.bound}, %[[V:.+]]: tensor<2x1x1xf32> {lamina.bound})
// CHECK: %[[S:.+]] = "nn.rsqrt"(%[[V]])
// CHECK: %[[SW:.+]] = "nn.reshape"(%[[S]]) : (tensor<2x1x1xf32>) -> tensor<2x1x1x1xf32>
// CHECK: %[[WS:.+]] = "nn.mul"(%[[W]], %[[SW]])
// CHECK: %[[SB:.+]] = "nn.reshape"(%[[S]]) : (tensor<2x1x1xf32>) -> tensor<2xf32>
// CHECK: %[[BS:.+]] = "nn.mul"(%[[B]], %[[SB]])
// CHECK: %[[C:.+]] = "nn.conv2d"(%[[X]], %[[WS]], %[[BS]]) {groups = 2 : i64, padding = array<i64: 1, 1, 1, 1>}
// CHECK: return %[[C]]
func.func @bound_conv_bias(%x: tensor<1x2x4x4xf32>, %w: tensor<2x1x3x3xf32> {lamina.bound},
                           %b: tensor<2xf32> {lamina.bound},
                           %var: tensor<2x1x1xf32> {lamina.bound}) -> tensor<1x2x4x4xf32> {
  %s = "nn.rsqrt"(%var) : (tensor<2x1x1xf32>) -> tensor<2x1x1xf32>
  %y = "nn.conv2d"(%x, %w, %b) {groups = 2 : i64, padding = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>, tensor<2x1x3x3xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %0 = "nn.mul"(%s, %y) : (tensor<2x1x1xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %0 : tensor<1x2x4x4xf32>
}

// -----

// A linear layer followed by a batch norm over its features.
// CHECK-LABEL: func.func @matmul_scale
// CHECK-SAME: (%[[X:.+]]: tensor<4x3xf32>)
// CHECK: %[[S:.+]] = "nn.reshape"(%{{.+}}) : (tensor<2xf32>) -> tensor<1x2xf32>
// CHECK: %[[WS:.+]] = "nn.mul"(%{{.+}}, %[[S]]) : (tensor<3x2xf32>, tensor<1x2xf32>) -> tensor<3x2xf32>
// CHECK: %[[M:.+]] = "nn.matmul"(%[[X]], %[[WS]])
// CHECK: return %[[M]]
func.func @matmul_scale(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %w = arith.constant dense<1.0> : tensor<3x2xf32>
  %scale = arith.constant dense<[2.0, 3.0]> : tensor<2xf32>
  %y = "nn.matmul"(%x, %w) : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %0 = "nn.mul"(%y, %scale) : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

// Statistics that are arguments not bound: not folded.
// CHECK-LABEL: func.func @unbound_statistics
// CHECK: %[[C:.+]] = "nn.conv2d"
// CHECK: "nn.mul"(%[[C]],
func.func @unbound_statistics(%x: tensor<1x1x3x3xf32>, %var: tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32> {
  %w = arith.constant dense<1.0> : tensor<2x1x1x1xf32>
  %s = "nn.rsqrt"(%var) : (tensor<2x1x1xf32>) -> tensor<2x1x1xf32>
  %y = "nn.conv2d"(%x, %w) : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %0 = "nn.mul"(%y, %s) : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  return %0 : tensor<1x2x3x3xf32>
}

// -----

// A scale per pixel, and a convolution whose result is used twice: not folded.
// CHECK-LABEL: func.func @not_per_channel
// CHECK: %[[C:.+]] = "nn.conv2d"
// CHECK: "nn.mul"(%[[C]],
// CHECK: %[[D:.+]] = "nn.conv2d"
// CHECK: "nn.mul"(%[[D]],
func.func @not_per_channel(%x: tensor<1x1x3x3xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) {
  %w = arith.constant dense<1.0> : tensor<2x1x1x1xf32>
  %pixels = arith.constant dense<2.0> : tensor<3x3xf32>
  %channels = arith.constant dense<2.0> : tensor<2x1x1xf32>
  %y = "nn.conv2d"(%x, %w) : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %0 = "nn.mul"(%y, %pixels) : (tensor<1x2x3x3xf32>, tensor<3x3xf32>) -> tensor<1x2x3x3xf32>
  %z = "nn.conv2d"(%x, %w) : (tensor<1x1x3x3xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x3x3xf32>
  %1 = "nn.mul"(%z, %channels) : (tensor<1x2x3x3xf32>, tensor<2x1x1xf32>) -> tensor<1x2x3x3xf32>
  %2 = "nn.add"(%1, %z) : (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>) -> tensor<1x2x3x3xf32>
  return %0, %2 : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>
}

// -----

// A linear layer with its bias, then a batch norm over its features: the
// scale moves into the weight and the bias.
// CHECK-LABEL: func.func @linear_bias_scale
// CHECK-SAME: (%[[X:.+]]: tensor<4x3xf32>, %[[W:.+]]: tensor<3x2xf32> {lamina.bound}, %[[B:.+]]: tensor<2xf32> {lamina.bound}, %[[S:.+]]: tensor<2xf32> {lamina.bound})
// CHECK: %[[SR:.+]] = "nn.reshape"(%[[S]]) : (tensor<2xf32>) -> tensor<1x2xf32>
// CHECK: %[[WS:.+]] = "nn.mul"(%[[W]], %[[SR]])
// CHECK: %[[M:.+]] = "nn.matmul"(%[[X]], %[[WS]])
// CHECK: %[[BS:.+]] = "nn.mul"(%[[B]], %[[S]])
// CHECK: %[[A:.+]] = "nn.add"(%[[M]], %[[BS]])
// CHECK: return %[[A]]
func.func @linear_bias_scale(%x: tensor<4x3xf32>, %w: tensor<3x2xf32> {lamina.bound},
                             %b: tensor<2xf32> {lamina.bound},
                             %s: tensor<2xf32> {lamina.bound}) -> tensor<4x2xf32> {
  %y = "nn.matmul"(%x, %w) : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %0 = "nn.add"(%y, %b) : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %1 = "nn.mul"(%0, %s) : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  return %1 : tensor<4x2xf32>
}

// -----

// An addition of an input (not a bias) between the matmul and the scale:
// not folded.
// CHECK-LABEL: func.func @residual_then_scale
// CHECK: %[[M:.+]] = "nn.matmul"
// CHECK: %[[A:.+]] = "nn.add"(%[[M]],
// CHECK: "nn.mul"(%[[A]],
func.func @residual_then_scale(%x: tensor<4x3xf32>, %r: tensor<4x2xf32>,
                               %w: tensor<3x2xf32> {lamina.bound},
                               %s: tensor<2xf32> {lamina.bound}) -> tensor<4x2xf32> {
  %y = "nn.matmul"(%x, %w) : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %0 = "nn.add"(%y, %r) : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %1 = "nn.mul"(%0, %s) : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  return %1 : tensor<4x2xf32>
}

// -----

// An integer matmul's i8 weights cannot hold an i32 scale: the
// multiplication stays (with and without a bias in between).
// CHECK-LABEL: func.func @integer_matmul_scale
// CHECK: %[[P:.+]] = "nn.matmul"(%{{.+}}, %{{.+}}) : (tensor<2x4xi8>, tensor<4x3xi8>) -> tensor<2x3xi32>
// CHECK: "nn.mul"(%[[P]], %{{.+}})
// CHECK: %[[Q:.+]] = "nn.matmul"
// CHECK: %[[A:.+]] = "nn.add"(%[[Q]], %{{.+}})
// CHECK: "nn.mul"(%[[A]], %{{.+}})
func.func @integer_matmul_scale(%x: tensor<2x4xi8>) -> (tensor<2x3xi32>, tensor<2x3xi32>) {
  %w = arith.constant dense<1> : tensor<4x3xi8>
  %scale = arith.constant dense<[2, 3, 4]> : tensor<3xi32>
  %bias = arith.constant dense<[1, 1, 1]> : tensor<3xi32>
  %y = "nn.matmul"(%x, %w) : (tensor<2x4xi8>, tensor<4x3xi8>) -> tensor<2x3xi32>
  %0 = "nn.mul"(%y, %scale) : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %z = "nn.matmul"(%x, %w) : (tensor<2x4xi8>, tensor<4x3xi8>) -> tensor<2x3xi32>
  %1 = "nn.add"(%z, %bias) : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %2 = "nn.mul"(%1, %scale) : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  return %0, %2 : tensor<2x3xi32>, tensor<2x3xi32>
}
