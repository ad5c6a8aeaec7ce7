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
