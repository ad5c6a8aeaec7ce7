// RUN: lamina-opt %s --split-input-file --convert-hw-to-nvgpu=chip=sm_80 | FileCheck %s

// A row kernel of 128 threads: each holds two vectors of four elements of
// the 1024-element row tile (vectors t and t + 128), loaded and stored as
// vectors (the memref is the space, the run's offset a multiple of 4); the
// block reduction folds each thread's elements, then each warp's lanes by
// butterfly shuffles, then the 4 warps' totals through the shared scratch
// between barriers (each warp shuffles them again); its one-element result
// is read by every thread.
// CHECK-LABEL: gpu.func @row
// CHECK: %[[ROW:.+]] = memref.alloca() : memref<8xf32, #gpu.address_space<private>>
// CHECK: %[[STAT:.+]] = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
// CHECK: %[[FLAT:.+]] = memref.collapse_shape %{{.+}} {{\[\[}}0, 1]] : memref<6x1000xf32> into memref<6000xf32>
// CHECK: scf.if
// CHECK: vector.load %[[FLAT]][%{{.+}}] {alignment = 16 : i64} : memref<6000xf32>, vector<4xf32>
// CHECK: gpu.shuffle  xor %{{.+}}, %{{.+}}, %{{.+}} : f32
// CHECK: gpu.shuffle  xor
// CHECK: gpu.shuffle  xor
// CHECK: gpu.shuffle  xor
// CHECK: gpu.shuffle  xor
// CHECK: memref.store %{{.+}}, %{{.+}}[%{{.+}}] : memref<4xf32, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK: memref.load %{{.+}}[%{{.+}}] : memref<4xf32, #gpu.address_space<workgroup>>
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK: gpu.barrier
// CHECK: memref.store %{{.+}}, %[[STAT]][%{{.+}}] : memref<1xf32, #gpu.address_space<private>>
// CHECK: memref.load %[[STAT]][%{{.+}}] : memref<1xf32, #gpu.address_space<private>>
// CHECK: arith.subf
// CHECK: vector.store %{{.+}}, %{{.+}}[%{{.+}}] {alignment = 16 : i64} : memref<6000xf32>, vector<4xf32>
// CHECK-NOT: "hw.
func.func @main(%x: memref<6x1000xf32>, %y: memref<6x1000xf32>) {
  "hw.launch"(%x, %y) {kernel = @row, grid = array<i64: 6>, block = array<i64: 128>} : (memref<6x1000xf32>, memref<6x1000xf32>) -> ()
  return
}
func.func @row(%x: memref<6x1000xf32>, %y: memref<6x1000xf32>) attributes {hw.kernel} {
  %scratch = "hw.alloc"() : () -> memref<4xf32, #gpu.address_space<workgroup>>
  %t = "hw.alloc"() : () -> memref<1024xf32, #gpu.address_space<private>>
  %m = "hw.alloc"() : () -> memref<1xf32, #gpu.address_space<private>>
  %row = "hw.block_id"() {dim = 0 : i64} : () -> index
  %c1000 = arith.constant 1000 : index
  %offset = arith.muli %row, %c1000 : index
  "hw.load_elements"(%x, %t, %offset) {shape = array<i64: 6, 1000>, count = 1000 : i64} : (memref<6x1000xf32>, memref<1024xf32, #gpu.address_space<private>>, index) -> ()
  "hw.block_reduce"(%t, %m, %scratch) {combine = "maximum", count = 1000 : i64} : (memref<1024xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>, memref<4xf32, #gpu.address_space<workgroup>>) -> ()
  "hw.sub"(%t, %m, %t) : (memref<1024xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>, memref<1024xf32, #gpu.address_space<private>>) -> ()
  "hw.store_elements"(%t, %y, %offset) {shape = array<i64: 6, 1000>, count = 1000 : i64} : (memref<1024xf32, #gpu.address_space<private>>, memref<6x1000xf32>, index) -> ()
  return
}

// -----

// A row of the space's trailing dims (a gain), read by a row kernel whose
// runs start at its rows: the run's element i is the gain's, read in
// vectors from the gain itself.
// CHECK-LABEL: gpu.func @gain
// CHECK: vector.load %[[X:.+]][%{{.+}}] {alignment = 16 : i64} : memref<6000xf32>, vector<4xf32>
// CHECK: vector.load %{{.+}}[%{{.+}}] {alignment = 16 : i64} : memref<1000xf32>, vector<4xf32>
func.func @main(%x: memref<6x1000xf32>, %g: memref<1000xf32>, %y: memref<6x1000xf32>) {
  "hw.launch"(%x, %g, %y) {kernel = @gain, grid = array<i64: 6>, block = array<i64: 128>} : (memref<6x1000xf32>, memref<1000xf32>, memref<6x1000xf32>) -> ()
  return
}
func.func @gain(%x: memref<6x1000xf32>, %g: memref<1000xf32>, %y: memref<6x1000xf32>) attributes {hw.kernel} {
  %t = "hw.alloc"() : () -> memref<1024xf32, #gpu.address_space<private>>
  %u = "hw.alloc"() : () -> memref<1024xf32, #gpu.address_space<private>>
  %row = "hw.block_id"() {dim = 0 : i64} : () -> index
  %c1000 = arith.constant 1000 : index
  %offset = arith.muli %row, %c1000 : index
  "hw.load_elements"(%x, %t, %offset) {shape = array<i64: 6, 1000>, count = 1000 : i64} : (memref<6x1000xf32>, memref<1024xf32, #gpu.address_space<private>>, index) -> ()
  "hw.load_elements"(%g, %u, %offset) {shape = array<i64: 6, 1000>, count = 1000 : i64} : (memref<1000xf32>, memref<1024xf32, #gpu.address_space<private>>, index) -> ()
  "hw.mul"(%t, %u, %t) : (memref<1024xf32, #gpu.address_space<private>>, memref<1024xf32, #gpu.address_space<private>>, memref<1024xf32, #gpu.address_space<private>>) -> ()
  "hw.store_elements"(%t, %y, %offset) {shape = array<i64: 6, 1000>, count = 1000 : i64} : (memref<1024xf32, #gpu.address_space<private>>, memref<6x1000xf32>, index) -> ()
  return
}

// -----

// An operand that broadcasts (a row of 7 read into the 5x7 space) is read
// per element at its broadcast coordinates, and a run whose offset is not
// a multiple of the vector by construction is moved element by element; a
// one-warp reduction needs no shared memory; a row statistic is stored by
// the block's first thread.
// CHECK-LABEL: gpu.func @broadcast
// CHECK-NOT: vector.load
// CHECK: arith.remui %{{.+}}, %{{.+}} : index
// CHECK: memref.load %{{.+}}[%{{.+}}] : memref<7xf16>
// CHECK: gpu.shuffle  xor
// CHECK-NOT: gpu.barrier
// CHECK: arith.cmpi eq, %{{.+}}, %{{.+}} : index
// CHECK: scf.if
// CHECK: memref.store %{{.+}}, %{{.+}}[%{{.+}}] : memref<5xf16>
func.func @main(%b: memref<7xf16>, %s: memref<5xf16>, %start: index) {
  "hw.launch"(%b, %s, %start) {kernel = @broadcast, grid = array<i64: 5>, block = array<i64: 32>} : (memref<7xf16>, memref<5xf16>, index) -> ()
  return
}
func.func @broadcast(%b: memref<7xf16>, %s: memref<5xf16>, %start: index) attributes {hw.kernel} {
  %t = "hw.alloc"() : () -> memref<32xf16, #gpu.address_space<private>>
  %m = "hw.alloc"() : () -> memref<1xf16, #gpu.address_space<private>>
  %row = "hw.block_id"() {dim = 0 : i64} : () -> index
  "hw.load_elements"(%b, %t, %start) {shape = array<i64: 5, 7>, count = 7 : i64} : (memref<7xf16>, memref<32xf16, #gpu.address_space<private>>, index) -> ()
  "hw.block_reduce"(%t, %m) {combine = "add", count = 7 : i64} : (memref<32xf16, #gpu.address_space<private>>, memref<1xf16, #gpu.address_space<private>>) -> ()
  "hw.store_elements"(%m, %s, %row) {shape = array<i64: 5>, count = 1 : i64} : (memref<1xf16, #gpu.address_space<private>>, memref<5xf16>, index) -> ()
  return
}
