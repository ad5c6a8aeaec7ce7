// RUN: lamina-opt %s --split-input-file --nn-canonicalize | FileCheck %s

// CHECK-LABEL: func.func @transpose_of_transpose
// CHECK-SAME: (%[[X:.+]]: tensor<2x3x4xf32>)
// CHECK: %[[T:.+]] = "nn.transpose"(%[[X]]) {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
// CHECK-NOT: "nn.transpose"
// CHECK: return %[[T]]
func.func @transpose_of_transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = "nn.transpose"(%x) {perm = array<i64: 1, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %1 = "nn.transpose"(%0) {perm = array<i64: 0, 2, 1>} : (tensor<3x4x2xf32>) -> tensor<3x2x4xf32>
  %2 = "nn.transpose"(%1) {perm = array<i64: 2, 1, 0>} : (tensor<3x2x4xf32>) -> tensor<4x2x3xf32>
  return %2 : tensor<4x2x3xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_roundtrip
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NOT: "nn.transpose"
// CHECK: return %[[X]]
func.func @transpose_roundtrip(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "nn.transpose"(%x) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = "nn.transpose"(%0) {perm = array<i64: 1, 0>} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @identity_transpose
// CHECK-SAME: (%[[X:.+]]: tensor<2x3xf32>)
// CHECK-NOT: "nn.transpose"
// CHECK: return %[[X]]
func.func @identity_transpose(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "nn.transpose"(%x) {perm = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_of_reshape
// CHECK-SAME: (%[[X:.+]]: tensor<2x6xf32>)
// CHECK: %[[R:.+]] = "nn.reshape"(%[[X]]) : (tensor<2x6xf32>) -> tensor<4x3xf32>
// CHECK-NOT: "nn.reshape"
// CHECK: return %[[R]]
func.func @reshape_of_reshape(%x: tensor<2x6xf32>) -> tensor<4x3xf32> {
  %0 = "nn.reshape"(%x) : (tensor<2x6xf32>) -> tensor<12xf32>
  %1 = "nn.reshape"(%0) : (tensor<12xf32>) -> tensor<4x3xf32>
  return %1 : tensor<4x3xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_back
// CHECK-SAME: (%[[X:.+]]: tensor<2x6xf32>)
// CHECK-NOT: "nn.reshape"
// CHECK: return %[[X]]
func.func @reshape_back(%x: tensor<2x6xf32>) -> tensor<2x6xf32> {
  %0 = "nn.reshape"(%x) : (tensor<2x6xf32>) -> tensor<3x4xf32>
  %1 = "nn.reshape"(%0) : (tensor<3x4xf32>) -> tensor<2x6xf32>
  return %1 : tensor<2x6xf32>
}

// -----

// CHECK-LABEL: func.func @identity_reshape
// CHECK-SAME: (%[[X:.+]]: tensor<2x6xf32>)
// CHECK-NOT: "nn.reshape"
// CHECK: return %[[X]]
func.func @identity_reshape(%x: tensor<2x6xf32>) -> tensor<2x6xf32> {
  %0 = "nn.reshape"(%x) : (tensor<2x6xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

// CHECK-LABEL: func.func @identity_broadcast
// CHECK-SAME: (%[[X:.+]]: tensor<3x4xf32>)
// CHECK-NOT: "nn.broadcast_to"
// CHECK: return %[[X]]
func.func @identity_broadcast(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %0 = "nn.broadcast_to"(%x) : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// A real broadcast stays.
// CHECK-LABEL: func.func @broadcast_kept
// CHECK: "nn.broadcast_to"
func.func @broadcast_kept(%x: tensor<1x4xf32>) -> tensor<3x4xf32> {
  %0 = "nn.broadcast_to"(%x) : (tensor<1x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// CHECK-LABEL: func.func @mul_one
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK-NOT: "nn.mul"
// CHECK: return %[[X]], %[[X]]
func.func @mul_one(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %one = arith.constant dense<1.0> : tensor<4xf32>
  %0 = "nn.mul"(%x, %one) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = "nn.mul"(%one, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @add_zero
// CHECK-SAME: (%[[X:.+]]: tensor<2x4xf16>)
// CHECK-NOT: "nn.add"
// CHECK: return %[[X]], %[[X]]
func.func @add_zero(%x: tensor<2x4xf16>) -> (tensor<2x4xf16>, tensor<2x4xf16>) {
  %zero = arith.constant dense<0.0> : tensor<4xf16>
  %0 = "nn.add"(%x, %zero) : (tensor<2x4xf16>, tensor<4xf16>) -> tensor<2x4xf16>
  %1 = "nn.add"(%zero, %x) : (tensor<4xf16>, tensor<2x4xf16>) -> tensor<2x4xf16>
  return %0, %1 : tensor<2x4xf16>, tensor<2x4xf16>
}

// -----

// CHECK-LABEL: func.func @sub_zero
// CHECK-SAME: (%[[X:.+]]: tensor<4xbf16>)
// CHECK-NOT: "nn.sub"
// CHECK: return %[[X]]
func.func @sub_zero(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  %zero = arith.constant dense<0.0> : tensor<4xbf16>
  %0 = "nn.sub"(%x, %zero) : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

// 0 - x is a negation, not x.
// CHECK-LABEL: func.func @zero_minus_x_kept
// CHECK: "nn.sub"
func.func @zero_minus_x_kept(%x: tensor<4xf32>) -> tensor<4xf32> {
  %zero = arith.constant dense<0.0> : tensor<4xf32>
  %0 = "nn.sub"(%zero, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// The constant broadcasts x to a larger shape: the add stays.
// CHECK-LABEL: func.func @add_zero_broadcasting_kept
// CHECK: "nn.add"
func.func @add_zero_broadcasting_kept(%x: tensor<4xf32>) -> tensor<3x4xf32> {
  %zero = arith.constant dense<0.0> : tensor<3x4xf32>
  %0 = "nn.add"(%x, %zero) : (tensor<4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// Not a splat of the neutral element: kept.
// CHECK-LABEL: func.func @mul_non_one_kept
// CHECK: "nn.mul"
func.func @mul_non_one_kept(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %0 = "nn.mul"(%x, %c) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// CHECK-LABEL: func.func @relu_relu
// CHECK-SAME: (%[[X:.+]]: tensor<4xf32>)
// CHECK: %[[R:.+]] = "nn.relu"(%[[X]])
// CHECK-NOT: "nn.relu"
// CHECK: return %[[R]]
func.func @relu_relu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "nn.relu"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "nn.relu"(%1) : (tensor<4xf32>) -> tensor<4xf32>
  return %2 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @cast_same_type
// CHECK-SAME: (%[[X:.+]]: tensor<4xf16>)
// CHECK-NOT: "nn.cast"
// CHECK: return %[[X]]
func.func @cast_same_type(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = "nn.cast"(%x) : (tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// CHECK-LABEL: func.func @cast_kept
// CHECK: "nn.cast"
func.func @cast_kept(%x: tensor<4xf16>) -> tensor<4xf32> {
  %0 = "nn.cast"(%x) : (tensor<4xf16>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @unused_ops_erased
// CHECK-NOT: "nn.
// CHECK: return
func.func @unused_ops_erased(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "nn.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "nn.softmax"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %x : tensor<4xf32>
}
