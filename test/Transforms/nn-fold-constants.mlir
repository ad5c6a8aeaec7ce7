// RUN: lamina-opt %s --split-input-file --nn-fold-constants | FileCheck %s
// RUN: lamina-opt %s --split-input-file --nn-fold-constants='max-elements=4' | FileCheck %s --check-prefix=LIMIT

// A transpose of a constant weight, then a matmul of it with an argument:
// the transpose folds, the matmul stays.
// CHECK-LABEL: func.func @transposed_weight
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NOT: "nn.transpose"
// CHECK: %[[W:.+]] = arith.constant dense<{{\[}}[1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK: "nn.matmul"(%[[X]], %[[W]])
func.func @transposed_weight(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {
  %w = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %t = "nn.transpose"(%w) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %y = "nn.matmul"(%x, %t) : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}

// -----

// A batch norm's scale and shift, from constant statistics: every op folds.
// CHECK-LABEL: func.func @batch_norm_statistics
// CHECK-NOT: "nn.
// CHECK-DAG: arith.constant dense<[5.000000e-01, 2.000000e+00]> : tensor<2xf32>
// CHECK-DAG: arith.constant dense<[-5.000000e-01, -4.000000e+00]> : tensor<2xf32>
// CHECK: return
func.func @batch_norm_statistics() -> (tensor<2xf32>, tensor<2xf32>) {
  %var = arith.constant dense<[4.0, 0.25]> : tensor<2xf32>
  %mean = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %eps = arith.constant dense<0.0> : tensor<f32>
  %0 = "nn.add"(%var, %eps) : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %scale = "nn.rsqrt"(%0) : (tensor<2xf32>) -> tensor<2xf32>
  %1 = "nn.mul"(%mean, %scale) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %shift = "nn.neg"(%1) : (tensor<2xf32>) -> tensor<2xf32>
  return %scale, %shift : tensor<2xf32>, tensor<2xf32>
}

// -----

// An operand that is an argument: nothing folds.
// CHECK-LABEL: func.func @argument_operand
// CHECK: "nn.add"
// CHECK: "nn.mul"
func.func @argument_operand(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = "nn.add"(%x, %c) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %1 = "nn.mul"(%0, %c) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %1 : tensor<2xf32>
}

// -----

// A broadcast of a constant: folded under the default limit (16 elements
// from 2, and a splat-free result), kept as an op under max-elements=4.
// CHECK-LABEL: func.func @broadcast
// CHECK-NOT: "nn.broadcast_to"
// CHECK: arith.constant dense<{{\[}}[1.000000e+00, 2.000000e+00]{{.*}}> : tensor<8x2xf32>
// LIMIT-LABEL: func.func @broadcast
// LIMIT: "nn.broadcast_to"
func.func @broadcast() -> tensor<8x2xf32> {
  %c = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = "nn.broadcast_to"(%c) : (tensor<2xf32>) -> tensor<8x2xf32>
  return %0 : tensor<8x2xf32>
}

// -----

// A result whose elements are all equal becomes a splat; a constant used
// twice by one op is erased once.
// CHECK-LABEL: func.func @splat_result
// CHECK: %[[C:.+]] = arith.constant dense<4.000000e+00> : tensor<3xf32>
// CHECK-NOT: arith.constant
// CHECK: return %[[C]]
func.func @splat_result() -> tensor<3xf32> {
  %c = arith.constant dense<2.0> : tensor<3xf32>
  %0 = "nn.mul"(%c, %c) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
