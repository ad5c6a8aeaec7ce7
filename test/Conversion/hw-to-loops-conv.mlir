// RUN: lamina-opt %s --split-input-file --convert-hw-to-loops | FileCheck %s

// The emulation of the convolution ops. hw.conv_elements: each element of
// the run inside the space walks its window, the taps (kh, kw) in loops,
// a tap outside the input skipped (the padding: zeros), and in each tap
// the group's input channels, summing f32 products of the widened
// operands; the bias is added last.
// CHECK-LABEL: func.func private @direct
// CHECK: scf.if
// CHECK: arith.divui %{{.+}}, %{{.+}} : index
// CHECK: %[[ROWS:.+]] = scf.for %[[KH:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%{{.+}} = %{{.+}}) -> (f32) {
// CHECK: scf.for %[[KW:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%{{.+}} = %{{.+}}) -> (f32) {
// CHECK: arith.subi %{{.+}}, %{{.+}} : index
// CHECK: arith.cmpi ult
// CHECK: scf.if %{{.+}} -> (f32) {
// CHECK: scf.for %[[C:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[SUM:.+]] = %{{.+}}) -> (f32) {
// CHECK: memref.load %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : memref<1x6x8x8xf16>
// CHECK: arith.extf %{{.+}} : f16 to f32
// CHECK: memref.load %{{.+}}[%{{.+}}, %[[C]], %[[KH]], %[[KW]]] : memref<4x3x3x3xf16>
// CHECK: %[[P:.+]] = arith.mulf
// CHECK: arith.addf %[[SUM]], %[[P]] : f32
// CHECK: memref.load %{{.+}}[%{{.+}}] : memref<4xf16>
// CHECK: arith.addf %[[ROWS]], %{{.+}} : f32
// CHECK: memref.store %{{.+}}, %{{.+}}[%{{.+}}] : memref<256xf32>
// CHECK-NOT: "hw.
func.func @main(%x: memref<1x6x8x8xf16>, %w: memref<4x3x3x3xf16>, %b: memref<4xf16>, %y: memref<1x4x8x8xf32>) {
  "hw.launch"(%x, %w, %b, %y) {kernel = @direct, grid = array<i64: 1>, block = array<i64: 256>} : (memref<1x6x8x8xf16>, memref<4x3x3x3xf16>, memref<4xf16>, memref<1x4x8x8xf32>) -> ()
  return
}
func.func @direct(%x: memref<1x6x8x8xf16>, %w: memref<4x3x3x3xf16>, %b: memref<4xf16>, %y: memref<1x4x8x8xf32>) attributes {hw.kernel} {
  %t = "hw.alloc"() : () -> memref<256xf32, #gpu.address_space<private>>
  %o = arith.constant 0 : index
  "hw.conv_elements"(%x, %w, %t, %o, %b) {shape = array<i64: 1, 4, 8, 8>, count = 256 : i64, padding = array<i64: 1, 1>, groups = 2 : i64} : (memref<1x6x8x8xf16>, memref<4x3x3x3xf16>, memref<256xf32, #gpu.address_space<private>>, index, memref<4xf16>) -> ()
  "hw.store_elements"(%t, %y, %o) {shape = array<i64: 1, 4, 8, 8>, count = 256 : i64} : (memref<256xf32, #gpu.address_space<private>>, memref<1x4x8x8xf32>, index) -> ()
  return
}

// -----

// hw.im2col: each element of the tile is its im2col matrix element: the
// pixel (n, oh, ow) and the tap (c, kh, kw) from the row and the column,
// the input read at clamped indices and selected where the tap is inside
// the matrix and the input (zero in the padding and past the ends).
// CHECK-LABEL: func.func private @gather
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK: scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK: arith.divui
// CHECK: arith.remui
// CHECK: arith.cmpi ult
// CHECK: arith.minui
// CHECK: %[[V:.+]] = memref.load %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] : memref<1x8x8x16xf16>
// CHECK: %[[S:.+]] = arith.select %{{.+}}, %[[V]], %{{.+}} : f16
// CHECK: memref.store %[[S]], %{{.+}}[%[[I]], %[[J]]] : memref<64x32xf16>
// CHECK-NOT: "hw.
func.func @main(%x: memref<1x8x8x16xf16>) {
  "hw.launch"(%x) {kernel = @gather, grid = array<i64: 1>, block = array<i64: 128>} : (memref<1x8x8x16xf16>) -> ()
  return
}
func.func @gather(%x: memref<1x8x8x16xf16>) attributes {hw.kernel} {
  %a = "hw.alloc"() : () -> memref<64x32xf16, #gpu.address_space<workgroup>>
  %o = arith.constant 0 : index
  %k = arith.constant 32 : index
  "hw.im2col"(%x, %a, %o, %k) {space = array<i64: 1, 8, 8>, window = array<i64: 3, 3>, padding = array<i64: 1, 1>, layout = "NHWC"} : (memref<1x8x8x16xf16>, memref<64x32xf16, #gpu.address_space<workgroup>>, index, index) -> ()
  "hw.barrier"() : () -> ()
  return
}

// -----

// hw.im2col transposed (an NCHW conv's B tile: taps by pixels): tile
// element (i, j) is the matrix's (row + j, col + i).
// CHECK-LABEL: func.func private @gather_transposed
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK: scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK: %[[M:.+]] = arith.addi %{{.+}}, %[[J]] : index
// CHECK: %[[K:.+]] = arith.addi %{{.+}}, %[[I]] : index
// CHECK: arith.divui %[[M]]
// CHECK: memref.store %{{.+}}, %{{.+}}[%[[I]], %[[J]]] : memref<32x64xf16>
func.func @main(%x: memref<2x16x8x8xf16>) {
  "hw.launch"(%x) {kernel = @gather_transposed, grid = array<i64: 1>, block = array<i64: 128>} : (memref<2x16x8x8xf16>) -> ()
  return
}
func.func @gather_transposed(%x: memref<2x16x8x8xf16>) attributes {hw.kernel} {
  %b = "hw.alloc"() : () -> memref<32x64xf16, #gpu.address_space<workgroup>>
  %p = arith.constant 64 : index
  %k = arith.constant 32 : index
  "hw.im2col"(%x, %b, %p, %k) {space = array<i64: 2, 8, 8>, window = array<i64: 3, 3>, padding = array<i64: 1, 1>, transposed = true} : (memref<2x16x8x8xf16>, memref<32x64xf16, #gpu.address_space<workgroup>>, index, index) -> ()
  "hw.barrier"() : () -> ()
  return
}

// -----

// A store's extra broadcast over dims of 1 (a value per row of a batch of
// matrices) is read at index 0 of those dims.
// CHECK-LABEL: func.func private @per_row
// CHECK: %[[ROW:.+]] = arith.addi %{{.+}}, %{{.+}} : index
// CHECK: scf.if
// CHECK: %[[V:.+]] = memref.load %{{.+}} : memref<64x64xf32>
// CHECK: %[[Z:.+]] = arith.constant 0 : index
// CHECK: %[[E:.+]] = memref.load %{{.+}}[%[[Z]], %[[ROW]], %{{.+}}] : memref<1x70x1xf16>
// CHECK: call @per_row_epilogue(%[[V]], %[[E]]) : (f32, f16) -> f16
// CHECK: memref.store %{{.+}}, %{{.+}}[%{{.+}}, %[[ROW]], %{{.+}}] : memref<2x70x30xf16>
func.func @main(%y: memref<2x70x30xf16>, %s: memref<1x70x1xf16>) {
  "hw.launch"(%y, %s) {kernel = @per_row, grid = array<i64: 1>, block = array<i64: 128>} : (memref<2x70x30xf16>, memref<1x70x1xf16>) -> ()
  return
}
func.func private @per_row_epilogue(%acc: f32, %s: f16) -> f16 {
  %0 = arith.extf %s : f16 to f32
  %1 = arith.mulf %acc, %0 : f32
  %2 = arith.truncf %1 : f32 to f16
  return %2 : f16
}
func.func @per_row(%y: memref<2x70x30xf16>, %s: memref<1x70x1xf16>) attributes {hw.kernel} {
  %acc = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  "hw.fill"(%acc) : (memref<64x64xf32, #gpu.address_space<private>>) -> ()
  %o = arith.constant 0 : index
  %n = arith.constant 1 : index
  "hw.store"(%acc, %y, %s, %n, %o, %o) {epilogue = @per_row_epilogue, operandSegmentSizes = array<i32: 1, 1, 1, 3>} : (memref<64x64xf32, #gpu.address_space<private>>, memref<2x70x30xf16>, memref<1x70x1xf16>, index, index, index) -> ()
  return
}
