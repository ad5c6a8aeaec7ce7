// RUN: lamina-opt %s --split-input-file --cpu-x86-dot-products | FileCheck %s

// The register tile of the dot-product schedule: 2 rows x 1 panel of 16
// i32 lanes, over one group of 4 bytes; one vpdpbusd per accumulator
// vector, on the 64 bytes of each operand's row.
#id = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#acc = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3)>
// CHECK-LABEL: func.func @register_tile
// CHECK-SAME: (%[[A:.+]]: vector<2x1x1x16x4xi8>, %[[B:.+]]: vector<2x1x1x16x4xi8>, %[[ACC:.+]]: vector<2x1x16xi32>)
// CHECK: %[[ACC0:.+]] = vector.extract %[[ACC]][0, 0] : vector<16xi32> from vector<2x1x16xi32>
// CHECK: %[[A0:.+]] = vector.extract %[[A]][0, 0, 0] : vector<16x4xi8> from vector<2x1x1x16x4xi8>
// CHECK: %[[X0:.+]] = vector.shape_cast %[[A0]] : vector<16x4xi8> to vector<64xi8>
// CHECK: %[[B0:.+]] = vector.extract %[[B]][0, 0, 0] : vector<16x4xi8> from vector<2x1x1x16x4xi8>
// CHECK: %[[Y0:.+]] = vector.shape_cast %[[B0]] : vector<16x4xi8> to vector<64xi8>
// CHECK: %[[S0:.+]] = llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"(%[[ACC0]], %[[X0]], %[[Y0]]) : (vector<16xi32>, vector<64xi8>, vector<64xi8>) -> vector<16xi32>
// CHECK: %[[R0:.+]] = vector.insert %[[S0]], %[[ACC]] [0, 0] : vector<16xi32> into vector<2x1x16xi32>
// CHECK: vector.extract %[[ACC]][1, 0]
// CHECK: vector.extract %[[A]][1, 0, 0]
// CHECK: %[[S1:.+]] = llvm.call_intrinsic "llvm.x86.avx512.vpdpbusd.512"
// CHECK: %[[R1:.+]] = vector.insert %[[S1]], %[[R0]] [1, 0]
// CHECK-NOT: vector.contract
// CHECK-NOT: arith.ext
// CHECK: return %[[R1]]
func.func @register_tile(%a: vector<2x1x1x16x4xi8>, %b: vector<2x1x1x16x4xi8>, %acc: vector<2x1x16xi32>) -> vector<2x1x16xi32> {
  %x = arith.extui %a : vector<2x1x1x16x4xi8> to vector<2x1x1x16x4xi32>
  %y = arith.extsi %b : vector<2x1x1x16x4xi8> to vector<2x1x1x16x4xi32>
  %r = vector.contract {indexing_maps = [#id, #id, #acc], iterator_types = ["parallel", "parallel", "reduction", "parallel", "reduction"], kind = #vector.kind<add>} %x, %y, %acc : vector<2x1x1x16x4xi32>, vector<2x1x1x16x4xi32> into vector<2x1x16xi32>
  return %r : vector<2x1x16xi32>
}

// -----

// Signed by signed bytes (vpdpbusd's first operand is unsigned) and groups
// of 2 are left.
#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#acc = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @left
// CHECK-COUNT-2: vector.contract
// CHECK-NOT: llvm.call_intrinsic
func.func @left(%a: vector<1x16x4xi8>, %b: vector<1x16x4xi8>, %c: vector<1x16x2xi8>, %acc: vector<1x16xi32>) -> (vector<1x16xi32>, vector<1x16xi32>) {
  %x = arith.extsi %a : vector<1x16x4xi8> to vector<1x16x4xi32>
  %y = arith.extsi %b : vector<1x16x4xi8> to vector<1x16x4xi32>
  %r = vector.contract {indexing_maps = [#id, #id, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %x, %y, %acc : vector<1x16x4xi32>, vector<1x16x4xi32> into vector<1x16xi32>
  %u = arith.extui %c : vector<1x16x2xi8> to vector<1x16x2xi32>
  %v = arith.extsi %c : vector<1x16x2xi8> to vector<1x16x2xi32>
  %s = vector.contract {indexing_maps = [#id, #id, #acc], iterator_types = ["parallel", "parallel", "reduction"], kind = #vector.kind<add>} %u, %v, %acc : vector<1x16x2xi32>, vector<1x16x2xi32> into vector<1x16xi32>
  return %r, %s : vector<1x16xi32>, vector<1x16xi32>
}
