// RUN: lamina-opt %s | lamina-opt | FileCheck %s

// nn.fused prints and parses back, with several results of different types
// and its outlined body.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:[^:]+]]: tensor<4x8xf32>, %[[B:[^:]+]]: tensor<8xf32>)
// CHECK: %[[G:.+]]:2 = "nn.fused"(%[[X]], %[[B]]) {body = @fusion_0, kind = "elementwise"} : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xi1>)
// CHECK: return %[[G]]#0, %[[G]]#1
// CHECK: func.func private @fusion_0
// CHECK: "nn.add"
// CHECK: "nn.compare"
func.func @main(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xi1>) {
  %0:2 = "nn.fused"(%x, %b) {body = @fusion_0, kind = "elementwise"}
      : (tensor<4x8xf32>, tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xi1>)
  return %0#0, %0#1 : tensor<4x8xf32>, tensor<4x8xi1>
}
func.func private @fusion_0(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4x8xi1>) {
  %0 = "nn.add"(%x, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = "nn.compare"(%0, %x) {predicate = "gt"} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xi1>
}
