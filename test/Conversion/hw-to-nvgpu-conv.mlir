// RUN: lamina-opt %s --split-input-file --convert-hw-to-nvgpu=chip=sm_80 | FileCheck %s

// The direct kernel's hw.conv_elements: 256 threads of one element each;
// each thread walks its element's window (the emulation's loops).
// CHECK-LABEL: gpu.func @direct
// CHECK: %[[T:.+]] = memref.alloca() : memref<1xf32, #gpu.address_space<private>>
// CHECK: scf.if
// CHECK: scf.for %{{.+}} iter_args(%{{.+}} = %{{.+}}) -> (f32) {
// CHECK: scf.for %{{.+}} iter_args(%{{.+}} = %{{.+}}) -> (f32) {
// CHECK: scf.for %{{.+}} iter_args(%{{.+}} = %{{.+}}) -> (f32) {
// CHECK: arith.mulf
// CHECK: memref.store %{{.+}}, %[[T]][%{{.+}}] : memref<1xf32, #gpu.address_space<private>>
// CHECK-NOT: "hw.
func.func @main(%x: memref<1x6x8x8xf32>, %w: memref<4x3x3x3xf32>, %y: memref<1x4x8x8xf32>) {
  "hw.launch"(%x, %w, %y) {kernel = @direct, grid = array<i64: 1>, block = array<i64: 256>} : (memref<1x6x8x8xf32>, memref<4x3x3x3xf32>, memref<1x4x8x8xf32>) -> ()
  return
}
func.func @direct(%x: memref<1x6x8x8xf32>, %w: memref<4x3x3x3xf32>, %y: memref<1x4x8x8xf32>) attributes {hw.kernel} {
  %t = "hw.alloc"() : () -> memref<256xf32, #gpu.address_space<private>>
  %o = arith.constant 0 : index
  "hw.conv_elements"(%x, %w, %t, %o) {shape = array<i64: 1, 4, 8, 8>, count = 256 : i64, padding = array<i64: 1, 1>, groups = 2 : i64} : (memref<1x6x8x8xf32>, memref<4x3x3x3xf32>, memref<256xf32, #gpu.address_space<private>>, index) -> ()
  "hw.store_elements"(%t, %y, %o) {shape = array<i64: 1, 4, 8, 8>, count = 256 : i64} : (memref<256xf32, #gpu.address_space<private>>, memref<1x4x8x8xf32>, index) -> ()
  return
}

// -----

// hw.im2col in a block of 128 threads: a loop of 16 steps over the
// 64x32 tile, thread t gathering elements t, t + 128, ... (consecutive
// threads consecutive columns), each stored into the shared tile (a view
// of the dynamic shared memory, row-major: no swizzle for a gathered tile).
// CHECK-LABEL: gpu.func @gather
// CHECK: %[[TID:.+]] = gpu.thread_id  x
// CHECK: %[[A:.+]] = memref.view %{{.+}}[%{{.+}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<64x32xf16, #gpu.address_space<workgroup>>
// CHECK: scf.for %[[S:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK: %[[E:.+]] = arith.addi %[[TID]], %{{.+}} : index
// CHECK: %[[I:.+]] = arith.divui %[[E]], %{{.+}} : index
// CHECK: %[[J:.+]] = arith.remui %[[E]], %{{.+}} : index
// CHECK: memref.load %{{.+}} : memref<1x8x8x16xf16>
// CHECK: arith.select
// CHECK: memref.store %{{.+}}, %[[A]][%[[I]], %[[J]]] : memref<64x32xf16, #gpu.address_space<workgroup>>
// CHECK: gpu.barrier
// CHECK-NOT: "hw.
func.func @main(%x: memref<1x8x8x16xf16>) {
  "hw.launch"(%x) {kernel = @gather, grid = array<i64: 1>, block = array<i64: 128>} : (memref<1x8x8x16xf16>) -> ()
  return
}
func.func @gather(%x: memref<1x8x8x16xf16>) attributes {hw.kernel} {
  %a = "hw.alloc"() : () -> memref<64x32xf16, #gpu.address_space<workgroup>>
  %o = arith.constant 0 : index
  "hw.im2col"(%x, %a, %o, %o) {space = array<i64: 1, 8, 8>, window = array<i64: 3, 3>, padding = array<i64: 1, 1>, layout = "NHWC"} : (memref<1x8x8x16xf16>, memref<64x32xf16, #gpu.address_space<workgroup>>, index, index) -> ()
  "hw.barrier"() : () -> ()
  return
}

// -----

// A store's extra broadcast over dims of 1 (an NCHW conv's value per
// channel, [1, O, 1]) is read per element at index 0 of those dims, never
// as a pair of columns.
// CHECK-LABEL: gpu.func @per_row
// CHECK-NOT: vector.load %{{.+}} : memref<1x70x1xf16>
// CHECK: %[[E:.+]] = memref.load %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}] : memref<1x70x1xf16>
// CHECK: func.call @per_row_epilogue(%{{.+}}, %[[E]]) : (f32, f16) -> f16
// CHECK-NOT: "hw.
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
