// RUN: lamina-opt %s --split-input-file --cpu-flatten-contiguous-reads | FileCheck %s

// A row of a packed panel's pairs, read and reshaped to one vector, is
// read from the tensor with its innermost dims collapsed.
// CHECK-LABEL: func.func @panel_row
// CHECK-SAME: (%[[B:.+]]: tensor<4x48x32x2xbf16>, %[[I:.+]]: index, %[[K:.+]]: index)
// CHECK: %[[C16:.+]] = arith.constant 16 : index
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %[[B]] {{\[}}[0], [1], [2, 3]] : tensor<4x48x32x2xbf16> into tensor<4x48x64xbf16>
// CHECK: %[[C2:.+]] = arith.constant 2 : index
// CHECK: %[[OFFSET:.+]] = arith.muli %[[C16]], %[[C2]] : index
// CHECK: %[[V:.+]] = vector.transfer_read %[[FLAT]][%[[I]], %[[K]], %[[OFFSET]]], %{{.+}} {in_bounds = [true]} : tensor<4x48x64xbf16>, vector<32xbf16>
// CHECK-NOT: vector.shape_cast
// CHECK: return %[[V]]
func.func @panel_row(%b: tensor<4x48x32x2xbf16>, %i: index, %k: index) -> vector<32xbf16> {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %pad = arith.constant 0.0 : bf16
  %0 = vector.transfer_read %b[%i, %k, %c16, %c0], %pad {in_bounds = [true, true, true, true]} : tensor<4x48x32x2xbf16>, vector<1x1x16x2xbf16>
  %1 = vector.shape_cast %0 : vector<1x1x16x2xbf16> to vector<32xbf16>
  return %1 : vector<32xbf16>
}

// -----

// A slice taking its source's inner dims whole is contiguous too.
// CHECK-LABEL: func.func @whole_slice
// CHECK: tensor.collapse_shape %{{.+}} {{\[}}[0], [1, 2]] : tensor<1x16x2xbf16> into tensor<1x32xbf16>
// CHECK: vector.transfer_read {{.*}} : tensor<1x32xbf16>, vector<32xbf16>
func.func @whole_slice(%b: tensor<8x16x2xbf16>, %i: index) -> vector<32xbf16> {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : bf16
  %s = tensor.extract_slice %b[%i, 0, 0] [1, 16, 2] [1, 1, 1] : tensor<8x16x2xbf16> to tensor<1x16x2xbf16>
  %0 = vector.transfer_read %s[%c0, %c0, %c0], %pad {in_bounds = [true, true, true]} : tensor<1x16x2xbf16>, vector<1x16x2xbf16>
  %1 = vector.shape_cast %0 : vector<1x16x2xbf16> to vector<32xbf16>
  return %1 : vector<32xbf16>
}

// -----

// Not contiguous: a slice of half of its source's rows of pairs...
// CHECK-LABEL: func.func @strided_slice
// CHECK-NOT: tensor.collapse_shape
// CHECK: vector.shape_cast
func.func @strided_slice(%b: tensor<8x32x2xbf16>, %i: index) -> vector<32xbf16> {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : bf16
  %s = tensor.extract_slice %b[%i, 0, 0] [2, 8, 2] [1, 1, 1] : tensor<8x32x2xbf16> to tensor<2x8x2xbf16>
  %0 = vector.transfer_read %s[%c0, %c0, %c0], %pad {in_bounds = [true, true, true]} : tensor<2x8x2xbf16>, vector<2x8x2xbf16>
  %1 = vector.shape_cast %0 : vector<2x8x2xbf16> to vector<32xbf16>
  return %1 : vector<32xbf16>
}

// -----

// ... a vector that does not cover an inner dim whole, or a read that is
// not reshaped to one dim: unchanged.
// CHECK-LABEL: func.func @partial_inner_dim
// CHECK-NOT: tensor.collapse_shape
// CHECK: vector.shape_cast %{{.+}} : vector<1x8x2xf32> to vector<16xf32>
// CHECK: vector.shape_cast %{{.+}} : vector<1x16x2xf32> to vector<16x2xf32>
func.func @partial_inner_dim(%t: tensor<4x16x4xf32>, %u: tensor<4x16x2xf32>) -> (vector<16xf32>, vector<16x2xf32>) {
  %c0 = arith.constant 0 : index
  %pad = arith.constant 0.0 : f32
  %0 = vector.transfer_read %t[%c0, %c0, %c0], %pad {in_bounds = [true, true, true]} : tensor<4x16x4xf32>, vector<1x8x2xf32>
  %1 = vector.shape_cast %0 : vector<1x8x2xf32> to vector<16xf32>
  %2 = vector.transfer_read %u[%c0, %c0, %c0], %pad {in_bounds = [true, true, true]} : tensor<4x16x2xf32>, vector<1x16x2xf32>
  %3 = vector.shape_cast %2 : vector<1x16x2xf32> to vector<16x2xf32>
  return %1, %3 : vector<16xf32>, vector<16x2xf32>
}
