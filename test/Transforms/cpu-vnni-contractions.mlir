// RUN: lamina-opt %s --split-input-file --cpu-vnni-contractions | FileCheck %s

// A signed i8 matmul into a zero fill: A + 128 (the bits of the unsigned
// value) times B, zero-extended by sign-extended, summed from -128 times
// B's column sums on every row; the fusion group stays on every new op.
// CHECK-LABEL: func.func @matmul_i8
// CHECK-SAME: (%[[A:.+]]: tensor<6x20xi8>, %[[B:.+]]: tensor<20x33xi8>)
// CHECK: %[[OFFSET:.+]] = arith.constant -128 : i8
// CHECK: %[[UA:.+]] = linalg.generic {{.+}} ins(%[[A]] : tensor<6x20xi8>) {{.+}} attrs = {lamina.fusion_group = "g"}
// CHECK: arith.addi %{{.+}}, %[[OFFSET]] : i8
// CHECK: %[[SCALE:.+]] = arith.constant -128 : i32
// CHECK: %[[SUMS:.+]] = linalg.generic {{.+}} iterator_types = ["reduction", "parallel"]} ins(%[[B]] : tensor<20x33xi8>) outs(%{{.+}} : tensor<33xi32>)
// CHECK: arith.extsi
// CHECK: arith.muli %{{.+}}, %[[SCALE]] : i32
// CHECK: %[[ROWS:.+]] = linalg.generic {{.+}} ins(%[[SUMS]] : tensor<33xi32>) outs(%{{.+}} : tensor<6x33xi32>)
// CHECK: %[[C:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[UA]], %[[B]] : tensor<6x20xi8>, tensor<20x33xi8>) outs(%[[ROWS]] : tensor<6x33xi32>)
// CHECK: %[[X:.+]] = arith.extui %{{.+}} : i8 to i32
// CHECK: %[[Y:.+]] = arith.extsi %{{.+}} : i8 to i32
// CHECK: arith.muli %[[X]], %[[Y]] : i32
// CHECK: arith.addi
// CHECK-NOT: linalg.matmul
// CHECK: return %[[C]]
func.func @matmul_i8(%a: tensor<6x20xi8>, %b: tensor<20x33xi8>) -> tensor<6x33xi32> {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<6x33xi32>
  %f = linalg.fill {lamina.fusion_group = "g"} ins(%zero : i32) outs(%e : tensor<6x33xi32>) -> tensor<6x33xi32>
  %c = linalg.matmul {lamina.fusion_group = "g"} ins(%a, %b : tensor<6x20xi8>, tensor<20x33xi8>) outs(%f : tensor<6x33xi32>) -> tensor<6x33xi32>
  return %c : tensor<6x33xi32>
}

// -----

// An initial value other than zero, a batch matmul and a float matmul are
// left as they are.
// CHECK-LABEL: func.func @left
// CHECK-COUNT-3: linalg.{{(batch_)?}}matmul
// CHECK-NOT: arith.extui
func.func @left(%a: tensor<6x20xi8>, %b: tensor<20x33xi8>, %ba: tensor<2x6x20xi8>, %bb: tensor<2x20x33xi8>,
                %x: tensor<4x8xf32>, %y: tensor<8x4xf32>) -> (tensor<6x33xi32>, tensor<2x6x33xi32>, tensor<4x4xf32>) {
  %one = arith.constant 1 : i32
  %zero = arith.constant 0 : i32
  %fzero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<6x33xi32>
  %f = linalg.fill ins(%one : i32) outs(%e : tensor<6x33xi32>) -> tensor<6x33xi32>
  %c = linalg.matmul ins(%a, %b : tensor<6x20xi8>, tensor<20x33xi8>) outs(%f : tensor<6x33xi32>) -> tensor<6x33xi32>
  %be = tensor.empty() : tensor<2x6x33xi32>
  %bf = linalg.fill ins(%zero : i32) outs(%be : tensor<2x6x33xi32>) -> tensor<2x6x33xi32>
  %bc = linalg.batch_matmul ins(%ba, %bb : tensor<2x6x20xi8>, tensor<2x20x33xi8>) outs(%bf : tensor<2x6x33xi32>) -> tensor<2x6x33xi32>
  %fe = tensor.empty() : tensor<4x4xf32>
  %ff = linalg.fill ins(%fzero : f32) outs(%fe : tensor<4x4xf32>) -> tensor<4x4xf32>
  %fc = linalg.matmul ins(%x, %y : tensor<4x8xf32>, tensor<8x4xf32>) outs(%ff : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %c, %bc, %fc : tensor<6x33xi32>, tensor<2x6x33xi32>, tensor<4x4xf32>
}
