// A function's buffers share one arena, placed by their lifetimes: %a and
// %b are alive together and take disjoint bytes; %c is allocated after the
// last use of %a and reuses its bytes (offset 0); the deallocations of the
// planned buffers are gone, the arena is freed before the return.
// RUN: lamina-opt %s --split-input-file --cpu-plan-memory | FileCheck %s

// CHECK-LABEL: func.func @chain
// CHECK-SAME: lamina.memory_plan = {arena_bytes = 8192 : i64, buffer_bytes = 12288 : i64, buffers = 3 : i64}
// CHECK: %[[ARENA:.+]] = memref.alloc() {alignment = 64 : i64} : memref<8192xi8>
// CHECK: %[[A:.+]] = memref.view %[[ARENA]][%c0{{.*}}][] : memref<8192xi8> to memref<1024xf32>
// CHECK: %[[B:.+]] = memref.view %[[ARENA]][%c4096{{.*}}][] : memref<8192xi8> to memref<1024xf32>
// CHECK: linalg.copy ins(%[[A]] : memref<1024xf32>) outs(%[[B]] : memref<1024xf32>)
// CHECK: %[[C:.+]] = memref.view %[[ARENA]][%c0{{.*}}][] : memref<8192xi8> to memref<1024xf32>
// CHECK: linalg.copy ins(%[[B]] : memref<1024xf32>) outs(%[[C]] : memref<1024xf32>)
// CHECK-NOT: memref.dealloc %[[A]]
// CHECK: memref.dealloc %[[ARENA]] : memref<8192xi8>
// CHECK-NEXT: return
func.func @chain(%x: memref<1024xf32>, %y: memref<1024xf32>) {
  %a = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
  linalg.copy ins(%x : memref<1024xf32>) outs(%a : memref<1024xf32>)
  %b = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
  linalg.copy ins(%a : memref<1024xf32>) outs(%b : memref<1024xf32>)
  %c = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
  linalg.copy ins(%b : memref<1024xf32>) outs(%c : memref<1024xf32>)
  linalg.copy ins(%c : memref<1024xf32>) outs(%y : memref<1024xf32>)
  memref.dealloc %a : memref<1024xf32>
  memref.dealloc %b : memref<1024xf32>
  memref.dealloc %c : memref<1024xf32>
  return
}

// -----

// A use through a view (a reshape read inside a loop) keeps the buffer
// alive until that loop: %b, written by the loop, takes other bytes than
// %a; %d, allocated after the loop, reuses %a's (offset 0).
// CHECK-LABEL: func.func @views
// CHECK-SAME: lamina.memory_plan = {arena_bytes = 8192 : i64, buffer_bytes = 12288 : i64, buffers = 3 : i64}
// CHECK: memref.view %{{.+}}[%c0{{.*}}][] : memref<8192xi8> to memref<32x32xf32>
// CHECK: memref.view %{{.+}}[%c4096{{.*}}][] : memref<8192xi8> to memref<1024xf32>
// CHECK: scf.for
// CHECK: memref.view %{{.+}}[%c0{{.*}}][] : memref<8192xi8> to memref<1024xf32>
func.func @views(%x: memref<32x32xf32>, %y: memref<1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c1024 = arith.constant 1024 : index
  %a = memref.alloc() {alignment = 64 : i64} : memref<32x32xf32>
  linalg.copy ins(%x : memref<32x32xf32>) outs(%a : memref<32x32xf32>)
  %flat = memref.collapse_shape %a [[0, 1]] : memref<32x32xf32> into memref<1024xf32>
  %b = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
  scf.for %i = %c0 to %c1024 step %c1 {
    %v = memref.load %flat[%i] : memref<1024xf32>
    memref.store %v, %b[%i] : memref<1024xf32>
  }
  %d = memref.alloc() {alignment = 64 : i64} : memref<1024xf32>
  linalg.copy ins(%b : memref<1024xf32>) outs(%d : memref<1024xf32>)
  linalg.copy ins(%d : memref<1024xf32>) outs(%y : memref<1024xf32>)
  memref.dealloc %a : memref<32x32xf32>
  memref.dealloc %b : memref<1024xf32>
  memref.dealloc %d : memref<1024xf32>
  return
}

// -----

// A buffer that escapes (returned) keeps its own allocation; i1 buffers
// (stored as bytes later) and buffers in loops are not planned; with
// fewer than two buffers to place there is no arena.
// CHECK-LABEL: func.func @escapes
// CHECK-NOT: memory_plan
// CHECK-NOT: memref.view
// CHECK: memref.alloc() : memref<16xf32>
// CHECK: memref.alloc() : memref<16xi1>
// CHECK: memref.alloc() : memref<8xf32>
func.func @escapes(%x: memref<16xf32>) -> memref<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %a = memref.alloc() : memref<16xf32>
  linalg.copy ins(%x : memref<16xf32>) outs(%a : memref<16xf32>)
  %m = memref.alloc() : memref<16xi1>
  %t = arith.constant true
  linalg.fill ins(%t : i1) outs(%m : memref<16xi1>)
  scf.for %i = %c0 to %c4 step %c1 {
    %s = memref.alloc() : memref<8xf32>
    memref.dealloc %s : memref<8xf32>
  }
  memref.dealloc %m : memref<16xi1>
  return %a : memref<16xf32>
}
