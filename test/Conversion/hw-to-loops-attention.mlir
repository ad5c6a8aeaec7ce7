// RUN: lamina-opt %s --split-input-file --convert-hw-to-loops | FileCheck %s

// The emulation of attention's ops: hw.contract with B^T sums the f32
// products a[i, k] * b[j, k] in the order of k (B read at [j, k], as
// stored); hw.mask sets to -inf the scores whose key (col + j) is past the
// keys or, causal, after its query (row + i).
// CHECK-LABEL: func.func private @contract
// CHECK-SAME: (%[[ROW:[^:]+]]: index, %[[COL:[^:]+]]: index,
// CHECK: %[[A:.+]] = memref.alloca() : memref<4x8xf16>
// CHECK: %[[B:.+]] = memref.alloca() : memref<6x8xf16>
// CHECK: %[[C:.+]] = memref.alloca() : memref<4x6xf32>
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step
// CHECK: scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step
// CHECK: %[[C0:.+]] = memref.load %[[C]][%[[I]], %[[J]]]
// CHECK: scf.for %[[K:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[SUM:.+]] = %[[C0]]) -> (f32)
// CHECK: memref.load %[[A]][%[[I]], %[[K]]]
// CHECK: memref.load %[[B]][%[[J]], %[[K]]]
// CHECK: %[[P:.+]] = arith.mulf
// CHECK: arith.addf %[[SUM]], %[[P]] : f32
// CHECK: %[[NEG:.+]] = arith.constant 0xFF800000 : f32
// CHECK: %[[R:.+]] = arith.addi %[[ROW]], %{{.+}} : index
// CHECK: %[[KEY:.+]] = arith.addi %[[COL]], %{{.+}} : index
// CHECK: %[[PAST:.+]] = arith.cmpi uge, %[[KEY]], %{{.+}} : index
// CHECK: %[[AFTER:.+]] = arith.cmpi ugt, %[[KEY]], %[[R]] : index
// CHECK: %[[HIDE:.+]] = arith.ori %[[PAST]], %[[AFTER]] : i1
// CHECK: arith.select %[[HIDE]], %[[NEG]], %{{.+}} : f32
func.func @contract(%row: index, %col: index) attributes {hw.kernel} {
  %a = "hw.alloc"() : () -> memref<4x8xf16, #gpu.address_space<workgroup>>
  %b = "hw.alloc"() : () -> memref<6x8xf16, #gpu.address_space<workgroup>>
  %c = "hw.alloc"() : () -> memref<4x6xf32, #gpu.address_space<private>>
  "hw.contract"(%a, %b, %c) {transpose_b = true} : (memref<4x8xf16, #gpu.address_space<workgroup>>, memref<6x8xf16, #gpu.address_space<workgroup>>, memref<4x6xf32, #gpu.address_space<private>>) -> ()
  "hw.mask"(%c, %row, %col) {keys = 5 : i64, causal = true} : (memref<4x6xf32, #gpu.address_space<private>>, index, index) -> ()
  return
}

// -----

// Not causal: only the keys past the end are hidden.
// CHECK-LABEL: func.func private @keys_only
// CHECK: arith.cmpi uge
// CHECK-NOT: arith.cmpi ugt
// CHECK-NOT: arith.ori
func.func @keys_only(%row: index, %col: index) attributes {hw.kernel} {
  %c = "hw.alloc"() : () -> memref<4x6xf32, #gpu.address_space<private>>
  "hw.mask"(%c, %row, %col) {keys = 5 : i64} : (memref<4x6xf32, #gpu.address_space<private>>, index, index) -> ()
  return
}
