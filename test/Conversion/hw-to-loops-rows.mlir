// RUN: lamina-opt %s --split-input-file --convert-hw-to-loops | FileCheck %s

// The emulation of runs of elements and block reductions: each element of
// the tile inside the run and the space is moved (an operand that
// broadcasts read at its broadcast coordinates, the others read zeros), and
// a block reduction folds the run's elements in order, in f32.
// CHECK-LABEL: func.func private @row
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK: %[[AT:.+]] = arith.addi %{{.+}}, %[[I]] : index
// CHECK: arith.cmpi ult, %[[AT]], %{{.+}} : index
// CHECK: arith.cmpi ult, %[[I]], %{{.+}} : index
// CHECK: scf.if %{{.+}} -> (f16) {
// CHECK: arith.remui %[[AT]], %{{.+}} : index
// CHECK: memref.load %{{.+}}[%{{.+}}] : memref<7xf16>
// CHECK: } else {
// CHECK: %[[MAX:.+]] = scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %{{.+}}) -> (f32) {
// CHECK: arith.extf %{{.+}} : f16 to f32
// CHECK: arith.maximumf %[[ACC]], %{{.+}} : f32
// CHECK: arith.truncf %[[MAX]] : f32 to f16
// CHECK: memref.store %{{.+}}, %{{.+}}[%{{.+}}] : memref<5xf16>
// CHECK-NOT: "hw.
func.func @main(%b: memref<7xf16>, %s: memref<5xf16>) {
  "hw.launch"(%b, %s) {kernel = @row, grid = array<i64: 5>, block = array<i64: 32>} : (memref<7xf16>, memref<5xf16>) -> ()
  return
}
func.func @row(%b: memref<7xf16>, %s: memref<5xf16>) attributes {hw.kernel} {
  %t = "hw.alloc"() : () -> memref<32xf16, #gpu.address_space<private>>
  %m = "hw.alloc"() : () -> memref<1xf16, #gpu.address_space<private>>
  %row = "hw.block_id"() {dim = 0 : i64} : () -> index
  %c7 = arith.constant 7 : index
  %offset = arith.muli %row, %c7 : index
  "hw.load_elements"(%b, %t, %offset) {shape = array<i64: 5, 7>, count = 7 : i64} : (memref<7xf16>, memref<32xf16, #gpu.address_space<private>>, index) -> ()
  "hw.block_reduce"(%t, %m) {combine = "maximum", count = 7 : i64} : (memref<32xf16, #gpu.address_space<private>>, memref<1xf16, #gpu.address_space<private>>) -> ()
  "hw.store_elements"(%m, %s, %row) {shape = array<i64: 5>, count = 1 : i64} : (memref<1xf16, #gpu.address_space<private>>, memref<5xf16>, index) -> ()
  return
}
