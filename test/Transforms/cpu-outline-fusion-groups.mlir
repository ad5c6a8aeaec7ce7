// RUN: lamina-opt %s --split-input-file --cpu-outline-fusion-groups | FileCheck %s

// Two groups that differ only in the values of their weight and bias are
// one private function, called twice with each group's constants; the
// splat and scalar constants and the empty tensor are copied into it.

// CHECK-LABEL: func.func @two_layers
// CHECK-SAME: (%[[IN:[^:]+]]: tensor<4x2xf32>)
// CHECK-DAG: %[[W0:.+]] = arith.constant dense<{{\[}}[1.000000e+00, 2.000000e+00]
// CHECK-DAG: %[[B0:.+]] = arith.constant dense<[0.000000e+00, 1.000000e+00]>
// CHECK-DAG: %[[W1:.+]] = arith.constant dense<{{\[}}[5.000000e+00, 6.000000e+00]
// CHECK-DAG: %[[B1:.+]] = arith.constant dense<[8.000000e+00, 9.000000e+00]>
// CHECK: %[[H:.+]] = call @fusion_0(%[[IN]], %[[W0]], %[[B0]])
// CHECK: %[[O:.+]] = call @fusion_0(%[[H]], %[[W1]], %[[B1]])
// CHECK-NOT: linalg.
// CHECK: return %[[O]]
// CHECK-LABEL: func.func private @fusion_0
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x2xf32>, %[[W:[^:]+]]: tensor<2x2xf32>, %[[B:[^:]+]]: tensor<2xf32>) -> tensor<4x2xf32>
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[E:.+]] = tensor.empty() {lamina.fusion_group = "fusion_0", lamina.fusion_kind = "contraction"}
// CHECK: %[[F:.+]] = linalg.fill {lamina.fusion_group = "fusion_0", lamina.fusion_kind = "contraction"} ins(%[[ZERO]] : f32) outs(%[[E]] : tensor<4x2xf32>)
// CHECK: %[[M:.+]] = linalg.matmul {lamina.fusion_group = "fusion_0", lamina.fusion_kind = "contraction"} ins(%[[X]], %[[W]] : tensor<4x2xf32>, tensor<2x2xf32>) outs(%[[F]] : tensor<4x2xf32>)
// CHECK: %[[G:.+]] = linalg.generic {{.*}} ins(%[[M]], %[[B]] : tensor<4x2xf32>, tensor<2xf32>) outs(%[[E]] : tensor<4x2xf32>)
// CHECK: arith.maximumf %{{.+}}, %[[ZERO]]
// CHECK: return %[[G]] : tensor<4x2xf32>
// CHECK-NOT: func.func private
#map = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>
func.func @two_layers(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %w0 = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %b0 = arith.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %w1 = arith.constant dense<[[5.0, 6.0], [7.0, 8.0]]> : tensor<2x2xf32>
  %b1 = arith.constant dense<[8.0, 9.0]> : tensor<2xf32>
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() {lamina.fusion_group = "fusion_0", lamina.fusion_kind = "contraction"} : tensor<4x2xf32>
  %f0 = linalg.fill {lamina.fusion_group = "fusion_0", lamina.fusion_kind = "contraction"} ins(%zero : f32) outs(%e0 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %m0 = linalg.matmul {lamina.fusion_group = "fusion_0", lamina.fusion_kind = "contraction"} ins(%x, %w0 : tensor<4x2xf32>, tensor<2x2xf32>) outs(%f0 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %g0 = linalg.generic {indexing_maps = [#map, #bias, #map], iterator_types = ["parallel", "parallel"]} ins(%m0, %b0 : tensor<4x2xf32>, tensor<2xf32>) outs(%e0 : tensor<4x2xf32>) attrs = {lamina.fusion_group = "fusion_0", lamina.fusion_kind = "contraction"} {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4x2xf32>
  %zero1 = arith.constant 0.0 : f32
  %e1 = tensor.empty() {lamina.fusion_group = "fusion_1", lamina.fusion_kind = "contraction"} : tensor<4x2xf32>
  %f1 = linalg.fill {lamina.fusion_group = "fusion_1", lamina.fusion_kind = "contraction"} ins(%zero1 : f32) outs(%e1 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %m1 = linalg.matmul {lamina.fusion_group = "fusion_1", lamina.fusion_kind = "contraction"} ins(%g0, %w1 : tensor<4x2xf32>, tensor<2x2xf32>) outs(%f1 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %g1 = linalg.generic {indexing_maps = [#map, #bias, #map], iterator_types = ["parallel", "parallel"]} ins(%m1, %b1 : tensor<4x2xf32>, tensor<2xf32>) outs(%e1 : tensor<4x2xf32>) attrs = {lamina.fusion_group = "fusion_1", lamina.fusion_kind = "contraction"} {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    %r = arith.maximumf %s, %zero1 : f32
    linalg.yield %r : f32
  } -> tensor<4x2xf32>
  return %g1 : tensor<4x2xf32>
}

// -----

// Groups that differ in a copied constant (the slope of a leaky relu) or
// in a shape are not the same: only the two that are share a function,
// the others stay inline. A result read before the group's last op
// leaves the group inline.

// CHECK-LABEL: func.func @different
// CHECK: call @fusion_0(
// CHECK: arith.constant 2.000000e-01 : f32
// CHECK: linalg.generic {{.*}} attrs = {lamina.fusion_group = "fusion_1"
// CHECK: call @fusion_0(
// CHECK: linalg.generic {{.*}} attrs = {lamina.fusion_group = "fusion_3"
// CHECK: return
// CHECK-LABEL: func.func private @fusion_0
// CHECK-SAME: (%{{.+}}: tensor<4xf32>) -> tensor<4xf32>
// CHECK: arith.constant 1.000000e-01 : f32
// CHECK-NOT: func.func private
// CHECK-LABEL: func.func @read_inside
// CHECK-NOT: call
// CHECK: linalg.generic {{.*}} attrs = {lamina.fusion_group = "fusion_4"
// CHECK: "nn.neg"
// CHECK: linalg.generic {{.*}} attrs = {lamina.fusion_group = "fusion_4"
#id = affine_map<(d0) -> (d0)>
func.func @different(%x: tensor<4xf32>, %y: tensor<8xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8xf32>) {
  %a = arith.constant 0.1 : f32
  %e0 = tensor.empty() {lamina.fusion_group = "fusion_0", lamina.fusion_kind = "elementwise"} : tensor<4xf32>
  %g0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e0 : tensor<4xf32>) attrs = {lamina.fusion_group = "fusion_0", lamina.fusion_kind = "elementwise"} {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %a : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %b = arith.constant 0.2 : f32
  %e1 = tensor.empty() {lamina.fusion_group = "fusion_1", lamina.fusion_kind = "elementwise"} : tensor<4xf32>
  %g1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e1 : tensor<4xf32>) attrs = {lamina.fusion_group = "fusion_1", lamina.fusion_kind = "elementwise"} {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %b : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %e2 = tensor.empty() {lamina.fusion_group = "fusion_2", lamina.fusion_kind = "elementwise"} : tensor<4xf32>
  %g2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%g1 : tensor<4xf32>) outs(%e2 : tensor<4xf32>) attrs = {lamina.fusion_group = "fusion_2", lamina.fusion_kind = "elementwise"} {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %a : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %e3 = tensor.empty() {lamina.fusion_group = "fusion_3", lamina.fusion_kind = "elementwise"} : tensor<8xf32>
  %g3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%y : tensor<8xf32>) outs(%e3 : tensor<8xf32>) attrs = {lamina.fusion_group = "fusion_3", lamina.fusion_kind = "elementwise"} {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %a : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  return %g0, %g1, %g2, %g3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<8xf32>
}
func.func @read_inside(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %g0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) attrs = {lamina.fusion_group = "fusion_4", lamina.fusion_kind = "elementwise"} {
  ^bb0(%in: f32, %out: f32):
    %m = arith.addf %in, %in : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %n = "nn.neg"(%g0) : (tensor<4xf32>) -> tensor<4xf32>
  %g1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%n : tensor<4xf32>) outs(%e : tensor<4xf32>) attrs = {lamina.fusion_group = "fusion_4", lamina.fusion_kind = "elementwise"} {
  ^bb0(%in: f32, %out: f32):
    %m = arith.addf %in, %in : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %g1 : tensor<4xf32>
}

// -----

// A module with bound arguments keeps its groups inline, for
// func-split-initializer to move the weights' packing out of them.

// CHECK-LABEL: func.func @bound
// CHECK-NOT: call
// CHECK: linalg.generic {{.*}} attrs = {lamina.fusion_group = "fusion_0"
// CHECK-NOT: func.func private
#one = affine_map<(d0) -> (d0)>
func.func @bound(%w: tensor<4xf32> {lamina.bound}, %x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %g = linalg.generic {indexing_maps = [#one, #one, #one], iterator_types = ["parallel"]} ins(%w, %x : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) attrs = {lamina.fusion_group = "fusion_0", lamina.fusion_kind = "elementwise"} {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %g : tensor<4xf32>
}
