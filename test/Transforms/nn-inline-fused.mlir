// RUN: lamina-opt %s --split-input-file --nn-inline-fused | FileCheck %s

// A call of a fusion group's body (marked lamina.fusion_kind, as
// convert-nn-to-linalg lowers nn.fused) is inlined; the body's ops, except
// constants, are marked with the group and its kind, and the body is gone.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4xf32>, %[[Y:[^:]+]]: tensor<4xf32>)
// CHECK-NEXT: %[[C:.+]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: %[[E:.+]] = tensor.empty() {lamina.fusion_group = "fusion_0", lamina.fusion_kind = "elementwise"} : tensor<4xf32>
// CHECK-NEXT: %[[G:.+]] = linalg.generic {{{.*}}} ins(%[[X]], %[[Y]] : tensor<4xf32>, tensor<4xf32>) outs(%[[E]] : tensor<4xf32>) attrs = {lamina.fusion_group = "fusion_0", lamina.fusion_kind = "elementwise"}
// CHECK: arith.mulf %{{.+}}, %[[C]]
// CHECK: %[[N:.+]] = "nn.neg"(%[[G]])
// CHECK-NEXT: return %[[N]], %[[G]]
// CHECK-NOT: func.func private @fusion_0
#map = affine_map<(d0) -> (d0)>
func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = call @fusion_0(%x, %y) {lamina.fusion_kind = "elementwise"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = "nn.neg"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  return %1, %0 : tensor<4xf32>, tensor<4xf32>
}
func.func private @fusion_0(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %c = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %0 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
      ins(%x, %y : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    %m = arith.mulf %s, %c : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A body called twice is copied for each call: each copy is a group of its
// own.

// CHECK-LABEL: func.func @called_twice
// CHECK-NEXT: %[[A:.+]] = math.exp %{{.+}} {lamina.fusion_group = "fusion_3", lamina.fusion_kind = "reduction"}
// CHECK-NEXT: %[[B:.+]] = math.exp %[[A]] {lamina.fusion_group = "fusion_3_1", lamina.fusion_kind = "reduction"}
// CHECK-NEXT: return %[[B]]
// CHECK-NOT: func.func
func.func @called_twice(%x: f32) -> f32 {
  %0 = call @fusion_3(%x) {lamina.fusion_kind = "reduction"} : (f32) -> f32
  %1 = call @fusion_3(%0) {lamina.fusion_kind = "reduction"} : (f32) -> f32
  return %1 : f32
}
func.func private @fusion_3(%x: f32) -> f32 {
  %0 = math.exp %x : f32
  return %0 : f32
}

// -----

// Calls without the marker are left alone, and so is a body something
// else still refers to.

// CHECK-LABEL: func.func @unmarked_call
// CHECK-NEXT: %[[A:.+]] = call @helper(%{{.+}}) : (f32) -> f32
// CHECK-NEXT: %[[B:.+]] = math.exp %[[A]] {lamina.fusion_group = "helper", lamina.fusion_kind = "elementwise"}
// CHECK-NEXT: return %[[B]]
// CHECK: func.func private @helper
func.func @unmarked_call(%x: f32) -> f32 {
  %0 = call @helper(%x) : (f32) -> f32
  %1 = call @helper(%0) {lamina.fusion_kind = "elementwise"} : (f32) -> f32
  return %1 : f32
}
func.func private @helper(%x: f32) -> f32 {
  %0 = math.exp %x : f32
  return %0 : f32
}

