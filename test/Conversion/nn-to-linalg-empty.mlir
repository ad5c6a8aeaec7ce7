// Empty tensors in convert-nn-to-linalg: a slice that starts at the end of a
// dim (what an ONNX Slice past the end clamps to) reads nothing and becomes an
// empty tensor; an empty piece of a concat is left out. Non-empty slices and
// concats are lowered as before.
// RUN: lamina-opt %s --split-input-file --verify-diagnostics --convert-nn-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @empty_at_end
// CHECK: %[[E:.+]] = tensor.empty() : tensor<4x0xf32>
// CHECK-NOT: tensor.extract_slice
// CHECK: return %[[E]]
func.func @empty_at_end(%x: tensor<4x8xf32>) -> tensor<4x0xf32> {
  %y = "nn.slice"(%x) {starts = array<i64: 0, 8>, limits = array<i64: 4, 8>} : (tensor<4x8xf32>) -> tensor<4x0xf32>
  return %y : tensor<4x0xf32>
}

// -----

// CHECK-LABEL: func.func @empty_strided_in_middle
// CHECK: tensor.empty() : tensor<0x3xf16>
// CHECK-NOT: tensor.extract_slice
func.func @empty_strided_in_middle(%x: tensor<4x8xf16>) -> tensor<0x3xf16> {
  %y = "nn.slice"(%x) {starts = array<i64: 2, 1>, limits = array<i64: 2, 7>, strides = array<i64: 1, 2>} : (tensor<4x8xf16>) -> tensor<0x3xf16>
  return %y : tensor<0x3xf16>
}

// -----

// An empty slice of an empty dim.
// CHECK-LABEL: func.func @empty_of_empty
// CHECK: tensor.empty() : tensor<0x8xf32>
func.func @empty_of_empty(%x: tensor<0x8xf32>) -> tensor<0x8xf32> {
  %y = "nn.slice"(%x) {starts = array<i64: 0, 0>, limits = array<i64: 0, 8>} : (tensor<0x8xf32>) -> tensor<0x8xf32>
  return %y : tensor<0x8xf32>
}

// -----

// Not empty: the slice that ends at the end of a dim stays an extract_slice.
// CHECK-LABEL: func.func @last_column
// CHECK: tensor.extract_slice %{{.+}}[0, 7] [4, 1] [1, 1] : tensor<4x8xf32> to tensor<4x1xf32>
// CHECK-NOT: tensor.empty
func.func @last_column(%x: tensor<4x8xf32>) -> tensor<4x1xf32> {
  %y = "nn.slice"(%x) {starts = array<i64: 0, 7>, limits = array<i64: 4, 8>} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  return %y : tensor<4x1xf32>
}

// -----

// A start beyond the dim is still an error at the op.
func.func @start_past_the_end(%x: tensor<4x8xf32>) -> tensor<4x0xf32> {
  // expected-error @+1 {{slice bounds in dim 1 must satisfy 0 <= start <= limit <= 8, got start 9, limit 9}}
  %y = "nn.slice"(%x) {starts = array<i64: 0, 9>, limits = array<i64: 4, 9>} : (tensor<4x8xf32>) -> tensor<4x0xf32>
  return %y : tensor<4x0xf32>
}

// -----

// An empty piece of a concat is left out (bufferization would insert it
// past the end of the result); a concat of empty pieces is empty.
// CHECK-LABEL: func.func @concat_empty_last
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x3xf32>, %[[Y:[^:]+]]: tensor<2x5xf32>, %{{[^:]+}}: tensor<2x0xf32>)
// CHECK: %[[C:.+]] = tensor.concat dim(1) %[[X]], %[[Y]] : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
// CHECK: return %[[C]]
func.func @concat_empty_last(%x: tensor<2x3xf32>, %y: tensor<2x5xf32>, %e: tensor<2x0xf32>) -> tensor<2x8xf32> {
  %c = "nn.concat"(%x, %y, %e) {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>, tensor<2x0xf32>) -> tensor<2x8xf32>
  return %c : tensor<2x8xf32>
}

// -----

// CHECK-LABEL: func.func @concat_one_left
// CHECK-SAME: (%[[X:[^:]+]]: tensor<2x3xf32>
// CHECK-NOT: tensor.concat
// CHECK: return %[[X]]
func.func @concat_one_left(%x: tensor<2x3xf32>, %e: tensor<2x0xf32>) -> tensor<2x3xf32> {
  %c = "nn.concat"(%x, %e) {axis = -1 : i64} : (tensor<2x3xf32>, tensor<2x0xf32>) -> tensor<2x3xf32>
  return %c : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @concat_all_empty
// CHECK: %[[E:.+]] = tensor.empty() : tensor<0x3xf32>
// CHECK-NOT: tensor.concat
// CHECK: return %[[E]]
func.func @concat_all_empty(%x: tensor<0x3xf32>, %y: tensor<0x3xf32>) -> tensor<0x3xf32> {
  %c = "nn.concat"(%x, %y) {axis = 0 : i64} : (tensor<0x3xf32>, tensor<0x3xf32>) -> tensor<0x3xf32>
  return %c : tensor<0x3xf32>
}
