// Empty tensors in convert-nn-to-linalg: an op whose results all have a dim
// of 0 computes nothing and becomes tensor.empty, whatever the op (a slice
// that starts at the end of a dim, what an ONNX Slice past the end clamps
// to; an attention with no queries; a convolution of no images). An empty
// operand of a non-empty result gives the reference value: a pad of it is all
// padding, a convolution over no channels is its bias, an attention over no
// keys 0, and an empty piece of a concat is left out. Non-empty slices and
// concats are lowered as before.
// RUN: lamina-opt %s --split-input-file --verify-diagnostics --convert-nn-to-linalg | FileCheck %s
// RUN: lamina-opt %s --split-input-file --verify-diagnostics --convert-nn-to-linalg=attention-query-tile=8 | FileCheck %s --check-prefix=FLASH

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

// -----

// Any op with an empty result: no computation, whichever lowering would run.
// CHECK-LABEL: func.func @attention_no_queries
// CHECK-NEXT: %[[E:.+]] = tensor.empty() : tensor<2x0x4xf32>
// CHECK-NEXT: return %[[E]]
// FLASH-LABEL: func.func @attention_no_queries
// FLASH-NEXT: %[[E:.+]] = tensor.empty() : tensor<2x0x4xf32>
// FLASH-NEXT: return %[[E]]
func.func @attention_no_queries(%q: tensor<2x0x8xf32>, %k: tensor<2x3x8xf32>, %v: tensor<2x3x4xf32>) -> tensor<2x0x4xf32> {
  %0 = "nn.attention"(%q, %k, %v) {causal = true} : (tensor<2x0x8xf32>, tensor<2x3x8xf32>, tensor<2x3x4xf32>) -> tensor<2x0x4xf32>
  return %0 : tensor<2x0x4xf32>
}

// -----

// CHECK-LABEL: func.func @conv2d_no_images
// CHECK-NEXT: %[[E:.+]] = tensor.empty() : tensor<0x3x5x5xf16>
// CHECK-NEXT: return %[[E]]
func.func @conv2d_no_images(%x: tensor<0x2x5x5xf16>, %w: tensor<3x2x3x3xf16>) -> tensor<0x3x5x5xf16> {
  %0 = "nn.conv2d"(%x, %w) {padding = array<i64: 1, 1, 1, 1>} : (tensor<0x2x5x5xf16>, tensor<3x2x3x3xf16>) -> tensor<0x3x5x5xf16>
  return %0 : tensor<0x3x5x5xf16>
}

// -----

// A pad of an empty operand is its padding value: nothing is inserted.
// CHECK-LABEL: func.func @pad_of_empty
// CHECK: %[[V:.+]] = arith.constant 1.5{{.*}} : f32
// CHECK: %[[F:.+]] = linalg.fill ins(%[[V]] : f32) outs(%{{.+}} : tensor<1x21xf32>)
// CHECK-NOT: tensor.pad
// CHECK: return %[[F]]
func.func @pad_of_empty(%x: tensor<0x16xf32>) -> tensor<1x21xf32> {
  %0 = "nn.pad"(%x) {low = array<i64: 1, 2>, high = array<i64: 0, 3>, value = 1.5 : f32} : (tensor<0x16xf32>) -> tensor<1x21xf32>
  return %0 : tensor<1x21xf32>
}

// -----

// Attention over no keys: every query's keys are all hidden, which gives 0.
// FLASH-LABEL: func.func @attention_no_keys
// FLASH: %[[Z:.+]] = arith.constant 0.0{{.*}} : f32
// FLASH: %[[F:.+]] = linalg.fill ins(%[[Z]] : f32) outs(%{{.+}} : tensor<2x3x4xf32>)
// FLASH-NOT: scf.forall
// FLASH: return %[[F]]
func.func @attention_no_keys(%q: tensor<2x3x8xf32>, %k: tensor<2x0x8xf32>, %v: tensor<2x0x4xf32>) -> tensor<2x3x4xf32> {
  %0 = "nn.attention"(%q, %k, %v) : (tensor<2x3x8xf32>, tensor<2x0x8xf32>, tensor<2x0x4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// Not every result empty: the op is lowered (here the reduction over the
// empty dim gives zeros, the empty result an empty tensor).
// CHECK-LABEL: func.func @matmul_empty_reduction
// CHECK: linalg.matmul
func.func @matmul_empty_reduction(%a: tensor<3x0xf32>, %b: tensor<0x5xf32>) -> tensor<3x5xf32> {
  %0 = "nn.matmul"(%a, %b) : (tensor<3x0xf32>, tensor<0x5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

// What only an empty result read is erased, not lowered; what a non-empty
// result reads stays.
// CHECK-LABEL: func.func @dead_after_empty
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x8xf32>)
// CHECK-NOT: linalg.generic
// CHECK-NOT: nn.
// CHECK: %[[E:.+]] = tensor.empty() : tensor<4x0xf32>
// CHECK-NOT: linalg.generic
// CHECK: return %[[E]]
func.func @dead_after_empty(%x: tensor<4x8xf32>) -> tensor<4x0xf32> {
  %r = "nn.relu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %e = "nn.exp"(%r) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = "nn.slice"(%e) {starts = array<i64: 0, 8>, limits = array<i64: 4, 8>} : (tensor<4x8xf32>) -> tensor<4x0xf32>
  return %y : tensor<4x0xf32>
}

// -----

// CHECK-LABEL: func.func @shared_with_a_live_result
// CHECK: %[[R:.+]] = linalg.generic
// CHECK: tensor.empty() : tensor<4x0xf32>
// CHECK: return %[[R]]
func.func @shared_with_a_live_result(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x0xf32>) {
  %r = "nn.relu"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = "nn.slice"(%r) {starts = array<i64: 0, 8>, limits = array<i64: 4, 8>} : (tensor<4x8xf32>) -> tensor<4x0xf32>
  return %r, %y : tensor<4x8xf32>, tensor<4x0xf32>
}
