// RUN: lamina-opt %s --convert-hw-to-nvgpu=chip=sm_80 | FileCheck %s

// How register tiles in mma.sync's accumulator layout are stored: each
// thread's two adjacent columns by one vector store where that is aligned
// (rows of an even number of elements, a first column even by
// construction), else element by element; either way each element is
// guarded by its row's and its column's bounds.

// Rows of 75 elements: a pair would straddle rows and be misaligned.
// CHECK-LABEL: gpu.func @odd_rows
// CHECK-NOT: vector.store
// CHECK: scf.if
// CHECK: memref.store %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}] : memref<40x75xf16>
// CHECK-NOT: vector.store
// CHECK: gpu.return

// A first column that is not even by construction (a multiple of 31).
// CHECK-LABEL: gpu.func @odd_origin
// CHECK-NOT: vector.store
// CHECK: memref.store %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}] : memref<40x76xf32>
// CHECK-NOT: vector.store
// CHECK: gpu.return

// f32 pairs: one 8-byte store per pair.
// CHECK-LABEL: gpu.func @even
// CHECK: scf.if
// CHECK: vector.store %{{.+}}, %{{.+}}[%{{.+}}, %{{.+}}] {alignment = 8 : i64} : memref<40x76xf32>, vector<2xf32>
// CHECK: gpu.return

!Acc = memref<32x32xf32, #gpu.address_space<private>>

func.func @main(%h: memref<40x75xf16>, %f: memref<40x76xf32>) {
  "hw.launch"(%h) {kernel = @odd_rows, grid = array<i64: 2, 3>, block = array<i64: 128>} : (memref<40x75xf16>) -> ()
  "hw.launch"(%f) {kernel = @odd_origin, grid = array<i64: 2, 3>, block = array<i64: 128>} : (memref<40x76xf32>) -> ()
  "hw.launch"(%f) {kernel = @even, grid = array<i64: 2, 3>, block = array<i64: 128>} : (memref<40x76xf32>) -> ()
  return
}

func.func @odd_rows(%c: memref<40x75xf16>) attributes {hw.kernel} {
  %c32 = arith.constant 32 : index
  %bx = "hw.block_id"() {dim = 0 : i64} : () -> index
  %by = "hw.block_id"() {dim = 1 : i64} : () -> index
  %row = arith.muli %bx, %c32 : index
  %col = arith.muli %by, %c32 : index
  %acc = "hw.alloc"() : () -> !Acc
  "hw.fill"(%acc) {value = 1.0 : f64} : (!Acc) -> ()
  "hw.store"(%acc, %c, %row, %col) {operandSegmentSizes = array<i32: 1, 1, 0, 2>} : (!Acc, memref<40x75xf16>, index, index) -> ()
  return
}

func.func @odd_origin(%c: memref<40x76xf32>) attributes {hw.kernel} {
  %c31 = arith.constant 31 : index
  %c32 = arith.constant 32 : index
  %bx = "hw.block_id"() {dim = 0 : i64} : () -> index
  %by = "hw.block_id"() {dim = 1 : i64} : () -> index
  %row = arith.muli %bx, %c32 : index
  %col = arith.muli %by, %c31 : index
  %acc = "hw.alloc"() : () -> !Acc
  "hw.fill"(%acc) {value = 1.0 : f64} : (!Acc) -> ()
  "hw.store"(%acc, %c, %row, %col) {operandSegmentSizes = array<i32: 1, 1, 0, 2>} : (!Acc, memref<40x76xf32>, index, index) -> ()
  return
}

func.func @even(%c: memref<40x76xf32>) attributes {hw.kernel} {
  %c32 = arith.constant 32 : index
  %bx = "hw.block_id"() {dim = 0 : i64} : () -> index
  %by = "hw.block_id"() {dim = 1 : i64} : () -> index
  %row = arith.muli %bx, %c32 : index
  %col = arith.muli %by, %c32 : index
  %acc = "hw.alloc"() : () -> !Acc
  "hw.fill"(%acc) {value = 1.0 : f64} : (!Acc) -> ()
  "hw.store"(%acc, %c, %row, %col) {operandSegmentSizes = array<i32: 1, 1, 0, 2>} : (!Acc, memref<40x76xf32>, index, index) -> ()
  return
}
