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

// -----

// A 1x1 convolution as its contraction (the filters [F, C] times the image
// [C, P], both sign-extended) takes the same form: the filters shifted,
// the pixels' channel sums as the compensation.
// CHECK-LABEL: func.func @pointwise_convolution_i8
// CHECK-SAME: (%[[W:.+]]: tensor<32x64xi8>, %[[X:.+]]: tensor<64x49xi8>)
// CHECK: %[[UW:.+]] = linalg.generic {{.+}} ins(%[[W]] : tensor<32x64xi8>)
// CHECK: %[[SUMS:.+]] = linalg.generic {{.+}} ins(%[[X]] : tensor<64x49xi8>) outs(%{{.+}} : tensor<49xi32>)
// CHECK: linalg.generic {{.+}} ins(%[[UW]], %[[X]] : tensor<32x64xi8>, tensor<64x49xi8>)
// CHECK: arith.extui
// CHECK: arith.extsi
func.func @pointwise_convolution_i8(%w: tensor<32x64xi8>, %x: tensor<64x49xi8>) -> tensor<32x49xi32> {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<32x49xi32>
  %f = linalg.fill ins(%zero : i32) outs(%e : tensor<32x49xi32>) -> tensor<32x49xi32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%w, %x : tensor<32x64xi8>, tensor<64x49xi8>) outs(%f : tensor<32x49xi32>) {
  ^bb0(%a: i8, %b: i8, %acc: i32):
    %0 = arith.extsi %a : i8 to i32
    %1 = arith.extsi %b : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  } -> tensor<32x49xi32>
  return %c : tensor<32x49xi32>
}

// -----

// Left alone: a generic whose operands are extended otherwise (a ui8 x i8
// product is already vpdpbusd's form).
// CHECK-LABEL: func.func @unsigned_by_signed_left_alone
// CHECK-NOT: -128
// CHECK: linalg.generic
// CHECK-NOT: -128
func.func @unsigned_by_signed_left_alone(%a: tensor<8x64xi8>, %b: tensor<64x16xi8>) -> tensor<8x16xi32> {
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<8x16xi32>
  %f = linalg.fill ins(%zero : i32) outs(%e : tensor<8x16xi32>) -> tensor<8x16xi32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<8x64xi8>, tensor<64x16xi8>) outs(%f : tensor<8x16xi32>) {
  ^bb0(%x: i8, %y: i8, %acc: i32):
    %0 = arith.extui %x : i8 to i32
    %1 = arith.extsi %y : i8 to i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %acc, %2 : i32
    linalg.yield %3 : i32
  } -> tensor<8x16xi32>
  return %c : tensor<8x16xi32>
}
