// RUN: lamina-opt %s --split-input-file --hw-check-hazards --verify-diagnostics
// RUN: lamina-opt %s --split-input-file | lamina-opt --split-input-file | FileCheck %s --check-prefix=ROUND

// hw-check-hazards: consecutive reductions share their scratch (each
// synchronises after writing and after reading it), and the ops round-trip.
// ROUND-LABEL: func.func @shared_scratch
// ROUND: "hw.load_elements"(%{{.+}}, %{{.+}}, %{{.+}}) {count = 200 : i64, shape = array<i64: 4, 200>}
// ROUND: "hw.block_reduce"(%{{.+}}, %{{.+}}, %{{.+}}) {combine = "maximum", count = 200 : i64}
// ROUND: "hw.block_reduce"(%{{.+}}, %{{.+}}, %{{.+}}) {combine = "add", count = 200 : i64}
// ROUND: "hw.store_elements"(%{{.+}}, %{{.+}}, %{{.+}}) {count = 1 : i64, shape = array<i64: 4>}
func.func @main(%x: memref<4x200xf32>, %y: memref<4xf32>) {
  "hw.launch"(%x, %y) {kernel = @shared_scratch, grid = array<i64: 4>, block = array<i64: 128>} : (memref<4x200xf32>, memref<4xf32>) -> ()
  return
}
func.func @shared_scratch(%x: memref<4x200xf32>, %y: memref<4xf32>) attributes {hw.kernel} {
  %s = "hw.alloc"() : () -> memref<4xf32, #gpu.address_space<workgroup>>
  %t = "hw.alloc"() : () -> memref<256xf32, #gpu.address_space<private>>
  %m = "hw.alloc"() : () -> memref<1xf32, #gpu.address_space<private>>
  %row = "hw.block_id"() {dim = 0 : i64} : () -> index
  %c200 = arith.constant 200 : index
  %offset = arith.muli %row, %c200 : index
  "hw.load_elements"(%x, %t, %offset) {shape = array<i64: 4, 200>, count = 200 : i64} : (memref<4x200xf32>, memref<256xf32, #gpu.address_space<private>>, index) -> ()
  "hw.block_reduce"(%t, %m, %s) {combine = "maximum", count = 200 : i64} : (memref<256xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<workgroup>>) -> ()
  "hw.block_reduce"(%t, %m, %s) {combine = "add", count = 200 : i64} : (memref<256xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<workgroup>>) -> ()
  "hw.store_elements"(%m, %y, %row) {shape = array<i64: 4>, count = 1 : i64} : (memref<1xf32, #gpu.address_space<private>>, memref<4xf32>, index) -> ()
  return
}

// -----

// A scratch tile another op writes, read by a reduction with no barrier in
// between, is a hazard.
func.func @main(%x: memref<4x200xf32>) {
  "hw.launch"(%x) {kernel = @filled_scratch, grid = array<i64: 4>, block = array<i64: 128>} : (memref<4x200xf32>) -> ()
  return
}
func.func @filled_scratch(%x: memref<4x200xf32>) attributes {hw.kernel} {
  %s = "hw.alloc"() : () -> memref<4xf32, #gpu.address_space<workgroup>>
  %t = "hw.alloc"() : () -> memref<256xf32, #gpu.address_space<private>>
  %m = "hw.alloc"() : () -> memref<1xf32, #gpu.address_space<private>>
  "hw.fill"(%s) {value = 0.0 : f64} : (memref<4xf32, #gpu.address_space<workgroup>>) -> ()
  // expected-error @+1 {{overwrites shared tile memref<4xf32, #gpu.address_space<workgroup>>[0:4], written by 'hw.fill'}}
  "hw.block_reduce"(%t, %m, %s) {combine = "add", count = 200 : i64} : (memref<256xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<workgroup>>) -> ()
  return
}
