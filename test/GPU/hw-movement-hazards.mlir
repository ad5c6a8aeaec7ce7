// RUN: lamina-opt %s --split-input-file --hw-check-hazards --verify-diagnostics
// RUN: lamina-opt %s --split-input-file | lamina-opt --split-input-file | FileCheck %s --check-prefix=ROUND

// hw-check-hazards on the data-movement ops: a gather from a shared tile
// reads any of its elements, so it needs a barrier after the tile's copy,
// and the next copy into the tile a barrier after the gather; the ops
// round-trip.
// ROUND-LABEL: func.func @tiled_transpose
// ROUND: "hw.gather_elements"(%{{.+}}, %{{.+}}, %{{.+}}) {count = 1024 : i64, dims = array<i64: 1, 0>, shape = array<i64: 32, 32>}
// ROUND: "hw.store_elements"(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}) {count = 1024 : i64, shape = array<i64: 32, 32>}
func.func @main(%x: memref<40x70xf32>, %y: memref<70x40xf32>) {
  "hw.launch"(%x, %y) {kernel = @tiled_transpose, grid = array<i64: 6>, block = array<i64: 256>} : (memref<40x70xf32>, memref<70x40xf32>) -> ()
  return
}
func.func @tiled_transpose(%x: memref<40x70xf32>, %y: memref<70x40xf32>) attributes {hw.kernel} {
  %s = "hw.alloc"() : () -> memref<32x33xf32, #gpu.address_space<workgroup>>
  %t = "hw.alloc"() : () -> memref<1024xf32, #gpu.address_space<private>>
  %b = "hw.block_id"() {dim = 0 : i64} : () -> index
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %c6 = arith.constant 6 : index
  %c32 = arith.constant 32 : index
  scf.for %i = %b to %c6 step %c6 {
    %cr = arith.remui %i, %c3 : index
    %col = arith.muli %cr, %c32 : index
    %rr = arith.divui %i, %c3 : index
    %row = arith.muli %rr, %c32 : index
    "hw.copy"(%x, %s, %row, %col) : (memref<40x70xf32>, memref<32x33xf32, #gpu.address_space<workgroup>>, index, index) -> ()
    "hw.barrier"() : () -> ()
    "hw.gather_elements"(%s, %t, %c0) {shape = array<i64: 32, 32>, count = 1024 : i64, dims = array<i64: 1, 0>} : (memref<32x33xf32, #gpu.address_space<workgroup>>, memref<1024xf32, #gpu.address_space<private>>, index) -> ()
    "hw.barrier"() : () -> ()
    "hw.store_elements"(%t, %y, %c0, %col, %row) {shape = array<i64: 32, 32>, count = 1024 : i64} : (memref<1024xf32, #gpu.address_space<private>>, memref<70x40xf32>, index, index, index) -> ()
  }
  return
}

// -----

// No barrier between the copy and the gather: other threads' parts of the
// shared tile may not be written yet.
func.func @main(%x: memref<40x70xf32>) {
  "hw.launch"(%x) {kernel = @unsynchronised_gather, grid = array<i64: 1>, block = array<i64: 256>} : (memref<40x70xf32>) -> ()
  return
}
func.func @unsynchronised_gather(%x: memref<40x70xf32>) attributes {hw.kernel} {
  %s = "hw.alloc"() : () -> memref<32x33xf32, #gpu.address_space<workgroup>>
  %t = "hw.alloc"() : () -> memref<1024xf32, #gpu.address_space<private>>
  %c0 = arith.constant 0 : index
  "hw.copy"(%x, %s, %c0, %c0) : (memref<40x70xf32>, memref<32x33xf32, #gpu.address_space<workgroup>>, index, index) -> ()
  // expected-error @+1 {{reads shared tile memref<32x33xf32, #gpu.address_space<workgroup>>[0:32, 0:33], written by 'hw.copy'}}
  "hw.gather_elements"(%s, %t, %c0) {shape = array<i64: 32, 32>, count = 1024 : i64, dims = array<i64: 1, 0>} : (memref<32x33xf32, #gpu.address_space<workgroup>>, memref<1024xf32, #gpu.address_space<private>>, index) -> ()
  return
}

// -----

// No barrier between the gather and the next copy into the tile: other
// threads may still be reading it.
func.func @main(%x: memref<40x70xf32>) {
  "hw.launch"(%x) {kernel = @overwritten_while_read, grid = array<i64: 1>, block = array<i64: 256>} : (memref<40x70xf32>) -> ()
  return
}
func.func @overwritten_while_read(%x: memref<40x70xf32>) attributes {hw.kernel} {
  %s = "hw.alloc"() : () -> memref<32x33xf32, #gpu.address_space<workgroup>>
  %t = "hw.alloc"() : () -> memref<1024xf32, #gpu.address_space<private>>
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  "hw.copy"(%x, %s, %c0, %c0) : (memref<40x70xf32>, memref<32x33xf32, #gpu.address_space<workgroup>>, index, index) -> ()
  "hw.barrier"() : () -> ()
  "hw.gather_elements"(%s, %t, %c0) {shape = array<i64: 32, 32>, count = 1024 : i64, dims = array<i64: 1, 0>} : (memref<32x33xf32, #gpu.address_space<workgroup>>, memref<1024xf32, #gpu.address_space<private>>, index) -> ()
  // expected-error @+1 {{writes shared tile memref<32x33xf32, #gpu.address_space<workgroup>>[0:32, 0:33]}}
  "hw.copy"(%x, %s, %c0, %c32) : (memref<40x70xf32>, memref<32x33xf32, #gpu.address_space<workgroup>>, index, index) -> ()
  return
}
