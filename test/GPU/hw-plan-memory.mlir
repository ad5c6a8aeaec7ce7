// The intermediates of a GPU program's host function share one device
// arena, placed by their lifetimes: %a and %b are alive together (the
// second launch reads %a and writes %b) and take disjoint bytes; %c is
// allocated after the last use of %a and reuses its bytes (offset 0).
// Offsets are multiples of 256 bytes; the arena is not freed in the
// function (the runtime owns it); the kernel is left as it was.
// RUN: lamina-opt %s --split-input-file --hw-plan-memory | FileCheck %s

// CHECK-LABEL: func.func @chain
// CHECK-SAME: lamina.memory_plan = {arena_bytes = 8192 : i64, buffer_bytes = 12288 : i64, buffers = 3 : i64}
// CHECK: %[[ARENA:.+]] = memref.alloc() {alignment = 256 : i64} : memref<8192xi8>
// CHECK: %[[A:.+]] = memref.view %[[ARENA]][%c0{{.*}}][] : memref<8192xi8> to memref<1024xf32>
// CHECK: "hw.launch"(%{{.+}}, %[[A]]) {{.*}}kernel = @copy
// CHECK: %[[B:.+]] = memref.view %[[ARENA]][%c4096{{.*}}][] : memref<8192xi8> to memref<1024xf32>
// CHECK: "hw.launch"(%[[A]], %[[B]])
// CHECK: %[[C:.+]] = memref.view %[[ARENA]][%c0{{.*}}][] : memref<8192xi8> to memref<1024xf32>
// CHECK: "hw.launch"(%[[B]], %[[C]])
// CHECK: "hw.launch"(%[[C]], %{{.+}})
// CHECK-NOT: memref.dealloc
// CHECK: return
// CHECK-LABEL: func.func private @copy
// CHECK-NOT: memref.view
func.func @chain(%x: memref<1024xf32>, %y: memref<1024xf32>) {
  %a = memref.alloc() : memref<1024xf32>
  "hw.launch"(%x, %a) {kernel = @copy, grid = array<i64: 4>, block = array<i64: 256>} : (memref<1024xf32>, memref<1024xf32>) -> ()
  %b = memref.alloc() : memref<1024xf32>
  "hw.launch"(%a, %b) {kernel = @copy, grid = array<i64: 4>, block = array<i64: 256>} : (memref<1024xf32>, memref<1024xf32>) -> ()
  %c = memref.alloc() : memref<1024xf32>
  "hw.launch"(%b, %c) {kernel = @copy, grid = array<i64: 4>, block = array<i64: 256>} : (memref<1024xf32>, memref<1024xf32>) -> ()
  "hw.launch"(%c, %y) {kernel = @copy, grid = array<i64: 4>, block = array<i64: 256>} : (memref<1024xf32>, memref<1024xf32>) -> ()
  return
}
func.func private @copy(%in: memref<1024xf32>, %out: memref<1024xf32>) attributes {hw.kernel} {
  return
}

// -----

// A buffer read through a reshape: the view keeps it alive until the
// launch that reads it, so the next buffer takes other bytes, at the next
// multiple of 256.
// CHECK-LABEL: func.func @through_a_view
// CHECK-SAME: lamina.memory_plan = {arena_bytes = 456 : i64, buffer_bytes = 400 : i64, buffers = 2 : i64}
// CHECK: memref.view %{{.+}}[%c0{{.*}}][] : memref<456xi8> to memref<10x20xf8E4M3FN>
// CHECK: memref.collapse_shape
// CHECK: memref.view %{{.+}}[%c256{{.*}}][] : memref<456xi8> to memref<200xi8>
func.func @through_a_view(%x: memref<10x20xf8E4M3FN>, %y: memref<200xi8>) {
  %a = memref.alloc() : memref<10x20xf8E4M3FN>
  "hw.launch"(%x, %a) {kernel = @k, grid = array<i64: 1>, block = array<i64: 32>} : (memref<10x20xf8E4M3FN>, memref<10x20xf8E4M3FN>) -> ()
  %flat = memref.collapse_shape %a [[0, 1]] : memref<10x20xf8E4M3FN> into memref<200xf8E4M3FN>
  %b = memref.alloc() : memref<200xi8>
  "hw.launch"(%flat, %b) {kernel = @k2, grid = array<i64: 1>, block = array<i64: 32>} : (memref<200xf8E4M3FN>, memref<200xi8>) -> ()
  "hw.launch"(%b, %y) {kernel = @k3, grid = array<i64: 1>, block = array<i64: 32>} : (memref<200xi8>, memref<200xi8>) -> ()
  return
}
func.func private @k(%in: memref<10x20xf8E4M3FN>, %out: memref<10x20xf8E4M3FN>) attributes {hw.kernel} {
  return
}
func.func private @k2(%in: memref<200xf8E4M3FN>, %out: memref<200xi8>) attributes {hw.kernel} {
  return
}
func.func private @k3(%in: memref<200xi8>, %out: memref<200xi8>) attributes {hw.kernel} {
  return
}

// -----

// Negative: one intermediate needs no arena (nothing to share), and an
// allocation in workgroup memory is not the host's: both keep their
// allocations and the function gets no plan.
// CHECK-LABEL: func.func @nothing_to_share
// CHECK-NOT: lamina.memory_plan
// CHECK: memref.alloc() : memref<64xf32>
// CHECK-NOT: memref.view
func.func @nothing_to_share(%x: memref<64xf32>, %y: memref<64xf32>) {
  %a = memref.alloc() : memref<64xf32>
  "hw.launch"(%x, %a) {kernel = @k64, grid = array<i64: 1>, block = array<i64: 64>} : (memref<64xf32>, memref<64xf32>) -> ()
  "hw.launch"(%a, %y) {kernel = @k64, grid = array<i64: 1>, block = array<i64: 64>} : (memref<64xf32>, memref<64xf32>) -> ()
  return
}
func.func private @k64(%in: memref<64xf32>, %out: memref<64xf32>) attributes {hw.kernel} {
  return
}
