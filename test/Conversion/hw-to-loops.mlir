// RUN: lamina-opt %s --split-input-file --convert-hw-to-loops | FileCheck %s

// Launches become loops over the grid calling the kernel with the block
// index; kernels become private functions; tiles become allocas without a
// memory space; no hw op, type or memory space is left.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[A:.+]]: memref<100x70xf32>, %[[B:.+]]: memref<100x70xf32>)
// CHECK: scf.for %[[BZ:[^ ]+]] = %{{.+}} to %{{.+}} step
// CHECK: %[[C3:.+]] = arith.constant 3 : index
// CHECK: scf.for %[[BY:[^ ]+]] = %{{.+}} to %[[C3]] step
// CHECK: %[[C2:.+]] = arith.constant 2 : index
// CHECK: scf.for %[[BX:[^ ]+]] = %{{.+}} to %[[C2]] step
// CHECK: func.call @copy_kernel(%[[A]], %[[B]], %[[BX]], %[[BY]], %[[BZ]])
// CHECK-NOT: hw.launch
func.func @main(%a: memref<100x70xf32>, %b: memref<100x70xf32>) {
  "hw.launch"(%a, %b) {kernel = @copy_kernel, grid = array<i64: 2, 3>, block = array<i64: 64>} : (memref<100x70xf32>, memref<100x70xf32>) -> ()
  return
}

// A copy from global memory reads zeros past the memref's end (a select
// on a clamped load); a store to it is guarded.
// CHECK-LABEL: func.func private @copy_kernel
// CHECK-SAME: (%[[A:.+]]: memref<100x70xf32>, %[[B:.+]]: memref<100x70xf32>, %[[BX:.+]]: index, %[[BY:.+]]: index, %{{.+}}: index)
// CHECK-NOT: hw.kernel
// CHECK: %[[TILE:.+]] = memref.alloca() : memref<64x32xf32>
// CHECK: %[[ROW:.+]] = arith.muli %[[BX]]
// CHECK: %[[COL:.+]] = arith.muli %[[BY]]
// CHECK: scf.for %[[I:.+]] =
// CHECK: scf.for %[[J:.+]] =
// CHECK: %[[R:.+]] = arith.addi %[[ROW]], %[[I]]
// CHECK: %[[C:.+]] = arith.addi %[[COL]], %[[J]]
// CHECK: %[[IN:.+]] = arith.andi
// CHECK: %[[V:.+]] = memref.load %[[A]]
// CHECK: arith.select %[[IN]], %[[V]]
// CHECK: memref.store %{{.+}}, %[[TILE]][%[[I]], %[[J]]] : memref<64x32xf32>
// CHECK: scf.if
// CHECK: memref.store %{{.+}}, %[[B]]
// CHECK-NOT: hw.
// CHECK-NOT: address_space
func.func @copy_kernel(%a: memref<100x70xf32>, %b: memref<100x70xf32>) attributes {hw.kernel} {
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %bx = "hw.block_id"() {dim = 0 : i64} : () -> index
  %by = "hw.block_id"() {dim = 1 : i64} : () -> index
  %s = "hw.alloc"() : () -> memref<64x32xf32, #gpu.address_space<workgroup>>
  %row = arith.muli %bx, %c64 : index
  %col = arith.muli %by, %c32 : index
  %t = "hw.async_copy"(%a, %s, %row, %col) : (memref<100x70xf32>, memref<64x32xf32, #gpu.address_space<workgroup>>, index, index) -> !hw.token
  "hw.commit"(%t) : (!hw.token) -> ()
  "hw.wait"() {pending = 0 : i64} : () -> ()
  "hw.copy"(%s, %b, %row, %col) : (memref<64x32xf32, #gpu.address_space<workgroup>>, memref<100x70xf32>, index, index) -> ()
  return
}

// -----

// The MMA accumulates f32 products of widened f16 operands of the given
// stages; f32 operands are truncated to tf32 first.
// CHECK-LABEL: func.func private @mma_kernel
// CHECK: scf.for
// CHECK: scf.for
// CHECK: %[[INIT:.+]] = memref.load %[[ACC:.+]][
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[SUM:.+]] = %[[INIT]]) -> (f32)
// CHECK: %[[A:.+]] = memref.load %{{.+}}[%[[STAGE:[^,]+]], %{{.+}}, %{{.+}}] : memref<2x16x16xf16>
// CHECK: %[[AW:.+]] = arith.extf %[[A]] : f16 to f32
// CHECK: %[[B:.+]] = memref.load %{{.+}}[%[[STAGE]], %{{.+}}, %{{.+}}] : memref<2x16x8xf16>
// CHECK: %[[BW:.+]] = arith.extf %[[B]] : f16 to f32
// CHECK: %[[P:.+]] = arith.mulf %[[AW]], %[[BW]]
// CHECK: arith.addf %[[SUM]], %[[P]]
// CHECK: memref.store %{{.+}}, %[[ACC]]
// CHECK-NOT: arith.andi
func.func @mma_kernel(%s: index) attributes {hw.kernel} {
  %a = "hw.alloc"() : () -> memref<2x16x16xf16, #gpu.address_space<workgroup>>
  %b = "hw.alloc"() : () -> memref<2x16x8xf16, #gpu.address_space<workgroup>>
  %c = "hw.alloc"() : () -> memref<16x8xf32, #gpu.address_space<private>>
  "hw.mma"(%a, %b, %c, %s, %s) : (memref<2x16x16xf16, #gpu.address_space<workgroup>>, memref<2x16x8xf16, #gpu.address_space<workgroup>>, memref<16x8xf32, #gpu.address_space<private>>, index, index) -> ()
  return
}

// CHECK-LABEL: func.func private @tf32_kernel
// CHECK: arith.bitcast %{{.+}} : f32 to i32
// CHECK: arith.andi %{{.+}}, %{{.+}} : i32
// CHECK: arith.bitcast %{{.+}} : i32 to f32
func.func @tf32_kernel() attributes {hw.kernel} {
  %a = "hw.alloc"() : () -> memref<16x8xf32, #gpu.address_space<workgroup>>
  %b = "hw.alloc"() : () -> memref<8x8xf32, #gpu.address_space<workgroup>>
  %c = "hw.alloc"() : () -> memref<16x8xf32, #gpu.address_space<private>>
  "hw.mma"(%a, %b, %c) : (memref<16x8xf32, #gpu.address_space<workgroup>>, memref<8x8xf32, #gpu.address_space<workgroup>>, memref<16x8xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A store calls its epilogue on each element in bounds, with the bias at
// the element's column; synchronisation ops leave nothing behind.
// CHECK-LABEL: func.func private @store_kernel
// CHECK-NOT: mbarrier
// CHECK: scf.if
// CHECK: %[[ACC:.+]] = memref.load
// CHECK: %[[BIAS:.+]] = memref.load %{{.+}}[%[[COL:.+]]] : memref<70xf16>
// CHECK: %[[Y:.+]] = func.call @bias(%[[ACC]], %[[BIAS]]) : (f32, f16) -> f16
// CHECK: memref.store %[[Y]], %{{.+}}[%{{.+}}, %[[COL]]] : memref<100x70xf16>
func.func @store_kernel(%c: memref<100x70xf16>, %bias: memref<70xf16>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %bar = "hw.mbarrier_init"() : () -> !hw.mbarrier
  "hw.mbarrier_arrive"(%bar, %c0) : (!hw.mbarrier, index) -> ()
  "hw.mbarrier_wait"(%bar, %c0, %c0) : (!hw.mbarrier, index, index) -> ()
  %acc = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  "hw.store"(%acc, %c, %bias, %c0, %c0) {epilogue = @bias, operandSegmentSizes = array<i32: 1, 1, 1, 2>} : (memref<64x64xf32, #gpu.address_space<private>>, memref<100x70xf16>, memref<70xf16>, index, index) -> ()
  return
}
func.func private @bias(%acc: f32, %bias: f16) -> f16 {
  %b = arith.extf %bias : f16 to f32
  %s = arith.addf %acc, %b : f32
  %h = arith.truncf %s : f32 to f16
  return %h : f16
}

// -----

// 3xTF32 on B stored transposed (N x K, read at [j, k]): each f32 operand
// split into its rounded tf32 part and the rounded residual, three
// products added (the small ones first).
// CHECK-LABEL: func.func private @split_kernel
// CHECK: scf.for %[[I:[^ ]+]] =
// CHECK: scf.for %[[J:[^ ]+]] =
// CHECK: scf.for %[[K:[^ ]+]] =
// CHECK: memref.load %{{.+}}[%[[I]], %[[K]]] : memref<16x8xf32>
// CHECK: memref.load %{{.+}}[%[[J]], %[[K]]] : memref<8x8xf32>
// CHECK: arith.addi %{{.+}}, %c4096_i32
// CHECK: arith.subf
// CHECK-COUNT-3: arith.mulf
// CHECK-NOT: arith.mulf
// CHECK: scf.yield
func.func @split_kernel() attributes {hw.kernel} {
  %a = "hw.alloc"() : () -> memref<16x8xf32, #gpu.address_space<workgroup>>
  %b = "hw.alloc"() : () -> memref<8x8xf32, #gpu.address_space<workgroup>>
  %c = "hw.alloc"() : () -> memref<16x8xf32, #gpu.address_space<private>>
  "hw.mma"(%a, %b, %c) {precision = "3xtf32", transpose_b = true} : (memref<16x8xf32, #gpu.address_space<workgroup>>, memref<8x8xf32, #gpu.address_space<workgroup>>, memref<16x8xf32, #gpu.address_space<private>>) -> ()
  return
}
