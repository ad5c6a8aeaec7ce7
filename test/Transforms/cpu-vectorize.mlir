// RUN: lamina-opt %s --split-input-file --cpu-vectorize | FileCheck %s
// RUN: lamina-opt %s --split-input-file --cpu-vectorize='vector-sizes=8' | FileCheck %s --check-prefix=WIDTH8

// The output's innermost dim (32) is tiled by 16, rows by 1; the bias is
// read as a broadcast along the rows.
// CHECK-LABEL: func.func @add_bias
// CHECK-SAME: (%[[X:.+]]: memref<4x32xf32>, %[[B:.+]]: memref<32xf32>, %[[Y:.+]]: memref<4x32xf32>)
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step
// CHECK: scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step
// CHECK-DAG: %[[XT:.+]] = memref.subview %[[X]][%[[I]], %[[J]]] [1, 16] [1, 1]
// CHECK-DAG: %[[BT:.+]] = memref.subview %[[B]][%[[J]]] [16] [1]
// CHECK-DAG: %[[YT:.+]] = memref.subview %[[Y]][%[[I]], %[[J]]] [1, 16] [1, 1]
// CHECK-DAG: %[[XV:.+]] = vector.transfer_read %[[XT]]{{.+}} vector<1x16xf32>
// CHECK-DAG: %[[BV:.+]] = vector.transfer_read %[[BT]]{{.+}}permutation_map{{.+}} vector<1x16xf32>
// CHECK: %[[SUM:.+]] = arith.addf %[[XV]], %[[BV]] : vector<1x16xf32>
// CHECK: vector.transfer_write %[[SUM]], %[[YT]]
// CHECK-NOT: linalg.generic
// CHECK-NOT: lamina.vectorize
// WIDTH8-LABEL: func.func @add_bias
// WIDTH8: memref.subview %{{.+}} [1, 8] [1, 1]
// WIDTH8: arith.addf %{{.+}}, %{{.+}} : vector<1x8xf32>
func.func @add_bias(%arg0: memref<4x32xf32>, %arg1: memref<32xf32>, %arg2: memref<4x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : memref<4x32xf32>, memref<32xf32>) outs(%arg2 : memref<4x32xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.addf %in, %in_0 : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// The output's innermost dim is not contiguous in the input, so the
// reduction loop is vectorized: 24 is not a multiple of 16, but of 8.
// CHECK-LABEL: func.func @row_sum
// CHECK-SAME: (%[[X:.+]]: memref<4x24xf32>, %[[S:.+]]: memref<4xf32>)
// CHECK-DAG: %[[XT:.+]] = memref.subview %[[X]][%{{.+}}, %{{.+}}] [1, 8] [1, 1]
// CHECK-DAG: %[[ST:.+]] = memref.subview %[[S]][%{{.+}}] [1] [1]
// CHECK-DAG: %[[XV:.+]] = vector.transfer_read %[[XT]]{{.+}} vector<1x8xf32>
// CHECK-DAG: %[[ACC:.+]] = vector.transfer_read %[[ST]]{{.+}} vector<1xf32>
// CHECK: %[[R:.+]] = vector.multi_reduction <add>, %[[XV]], %[[ACC]] [1] : vector<1x8xf32> to vector<1xf32>
// CHECK: vector.transfer_write %[[R]], %[[ST]]
// CHECK-NOT: linalg.generic
func.func @row_sum(%arg0: memref<4x24xf32>, %arg1: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%arg0 : memref<4x24xf32>) outs(%arg1 : memref<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// The output's innermost loop reads the input with a stride: left whole.
// CHECK-LABEL: func.func @transpose_left_alone
// CHECK: linalg.generic
// CHECK-NOT: vector.
// CHECK-NOT: scf.for
func.func @transpose_left_alone(%arg0: memref<16x16xf32>, %arg1: memref<16x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0 : memref<16x16xf32>) outs(%arg1 : memref<16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}

// -----

// 5 is a multiple of no vector size: left whole.
// CHECK-LABEL: func.func @odd_extent_left_alone
// CHECK: linalg.generic
// CHECK-NOT: vector.
func.func @odd_extent_left_alone(%arg0: memref<3x5xf32>, %arg1: memref<3x5xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0 : memref<3x5xf32>) outs(%arg1 : memref<3x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %cst : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// i1 buffers are left to the loops (they are stored as bytes later).
// CHECK-LABEL: func.func @bool_output_left_alone
// CHECK: linalg.generic
// CHECK-NOT: vector.
func.func @bool_output_left_alone(%arg0: memref<16xf32>, %arg1: memref<16xf32>, %arg2: memref<16xi1>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%arg0, %arg1 : memref<16xf32>, memref<16xf32>) outs(%arg2 : memref<16xi1>) {
  ^bb0(%in: f32, %in_0: f32, %out: i1):
    %0 = arith.cmpf ogt, %in, %in_0 : f32
    linalg.yield %0 : i1
  }
  return
}

// -----

// Ops on tensors (before bufferization) are left alone.
// CHECK-LABEL: func.func @tensors_left_alone
// CHECK: linalg.generic
// CHECK-NOT: vector.
func.func @tensors_left_alone(%x: tensor<32xf32>) -> tensor<32xf32> {
  %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<32xf32>) outs(%x : tensor<32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %1 = arith.negf %in : f32
    linalg.yield %1 : f32
  } -> tensor<32xf32>
  return %0 : tensor<32xf32>
}

// -----

// The vectorizer refuses a body with a call: the op stays, tiled, for the
// loops stage, and the pass succeeds.
// CHECK-LABEL: func.func @refused_by_vectorizer
// CHECK: scf.for
// CHECK: scf.for
// CHECK: linalg.generic
// CHECK-SAME: memref<1x16xf32, strided<[32, 1], offset: ?>>
// CHECK-NOT: lamina.vectorize
// CHECK: call @scale
// CHECK-NOT: vector.
func.func private @scale(f32) -> f32
func.func @refused_by_vectorizer(%x: memref<4x32xf32>, %y: memref<4x32xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<4x32xf32>) outs(%y : memref<4x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = func.call @scale(%in) : (f32) -> f32
    linalg.yield %0 : f32
  }
  return
}
