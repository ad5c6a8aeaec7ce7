// RUN: lamina-opt %s --convert-hw-to-nvgpu=chip=sm_80 | FileCheck %s

// Kernels move into a gpu.module for the architecture; launches pass the
// dynamic shared memory of their kernel's tiles; each block-collective op
// is distributed over the block's threads.

// The launches are recorded for the kernel manifest.
// CHECK: module attributes {gpu.container_module, hw.launches = [{arguments = ["memref<100x64xf16>", "memref<64x72xf16>", "memref<72xf16>", "memref<100x72xf16>"], block = array<i64: 128, 1, 1>, dynamic_shared_memory = 16384 : i64, grid = array<i64: 2, 2, 1>, kernel = "matmul", tma_descriptors = []}]}
// CHECK-LABEL: func.func @main
// CHECK: %[[SMEM:.+]] = arith.constant 16384 : i32
// CHECK: gpu.launch_func @hw_kernels::@matmul blocks in (%{{.+}}, %{{.+}}, %{{.+}}) threads in (%{{.+}}, %{{.+}}, %{{.+}}) dynamic_shared_memory_size %[[SMEM]] args(%{{.+}} : memref<100x64xf16>, %{{.+}} : memref<64x72xf16>, %{{.+}} : memref<72xf16>, %{{.+}} : memref<100x72xf16>)
// CHECK-NOT: hw.

// CHECK: gpu.module @hw_kernels [#nvvm.target<chip = "sm_80", features = "+ptx70">]
// The epilogue is copied into the GPU module and called per element.
// CHECK: func.func private @bias_relu(%{{.+}}: f32, %{{.+}}: f16) -> f16
// CHECK-LABEL: gpu.func @matmul
// CHECK-SAME: kernel attributes {known_block_size = array<i32: 128, 1, 1>}
// CHECK: %[[TID:.+]] = gpu.thread_id  x
// CHECK: %[[DYN:.+]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK: gpu.block_id  x
// Shared tiles are views of the dynamic shared memory, 128-byte aligned.
// CHECK: memref.view %[[DYN]][%{{.+}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2x64x32xf16, #gpu.address_space<workgroup>>
// CHECK: memref.view %[[DYN]][%{{.+}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<2x32x64xf16, #gpu.address_space<workgroup>>
// The accumulator: 64x64 over 2x2 warps of 2x4 16x8 fragments, 32 per thread.
// CHECK: %[[ACC:.+]] = memref.alloca() : memref<32xf32, #gpu.address_space<private>>
// Async copies: 16 bytes per thread and chunk, zero-filled past the
// global row's end.
// CHECK: nvgpu.device_async_copy %{{.+}}[%{{.+}}, %{{.+}}], %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}], 8, %{{.+}} {bypassL1} : memref<100x64xf16> to memref<2x64x32xf16, #gpu.address_space<workgroup>>
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK: nvgpu.ldmatrix %{{.+}} {numTiles = 4 : i32, transpose = false} : memref<2x64x32xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// CHECK: nvgpu.ldmatrix %{{.+}} {numTiles = 4 : i32, transpose = true} : memref<2x32x64xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// CHECK: nvvm.mma.sync A[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] B[%{{.+}}, %{{.+}}] C[%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// Stores: column by column, two adjacent columns at a time (rows of 72
// elements, the tile's first column a multiple of 64): the bias read once
// per pair of columns, at a column clamped into it; each pair guarded by
// its row's and its column's bounds, computed by the epilogue and stored
// by one 4-byte vector store.
// CHECK: %[[AT:.+]] = arith.minui %{{.+}}, %{{.+}} : index
// CHECK: vector.load %{{.+}}[%[[AT]]] {alignment = 4 : i64} : memref<72xf16>, vector<2xf16>
// CHECK: scf.if
// CHECK: func.call @bias_relu
// CHECK: func.call @bias_relu
// CHECK: %[[PAIR:.+]] = vector.from_elements %{{.+}}, %{{.+}} : vector<2xf16>
// CHECK: vector.store %[[PAIR]], %{{.+}}[%{{.+}}, %{{.+}}] {alignment = 4 : i64} : memref<100x72xf16>, vector<2xf16>
// CHECK: gpu.return
// CHECK-NOT: hw.

!A = memref<100x64xf16>
!B = memref<64x72xf16>
!C = memref<100x72xf16>
!As = memref<2x64x32xf16, #gpu.address_space<workgroup>>
!Bs = memref<2x32x64xf16, #gpu.address_space<workgroup>>
!Acc = memref<64x64xf32, #gpu.address_space<private>>

func.func @main(%a: !A, %b: !B, %bias: memref<72xf16>, %c: !C) {
  "hw.launch"(%a, %b, %bias, %c) {kernel = @matmul, grid = array<i64: 2, 2>, block = array<i64: 128>} : (!A, !B, memref<72xf16>, !C) -> ()
  return
}

func.func @matmul(%a: !A, %b: !B, %bias: memref<72xf16>, %c: !C) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %bx = "hw.block_id"() {dim = 0 : i64} : () -> index
  %by = "hw.block_id"() {dim = 1 : i64} : () -> index
  %row = arith.muli %bx, %c64 : index
  %col = arith.muli %by, %c64 : index
  %as = "hw.alloc"() : () -> !As
  %bs = "hw.alloc"() : () -> !Bs
  %acc = "hw.alloc"() : () -> !Acc
  "hw.fill"(%acc) : (!Acc) -> ()
  %ta = "hw.async_copy"(%a, %as, %row, %c0, %c0) : (!A, !As, index, index, index) -> !hw.token
  %tb = "hw.async_copy"(%b, %bs, %c0, %col, %c0) : (!B, !Bs, index, index, index) -> !hw.token
  "hw.commit"(%ta, %tb) : (!hw.token, !hw.token) -> ()
  "hw.wait"() {pending = 0 : i64} : () -> ()
  "hw.mma"(%as, %bs, %acc, %c0, %c0) : (!As, !Bs, !Acc, index, index) -> ()
  "hw.store"(%acc, %c, %bias, %row, %col) {epilogue = @bias_relu, operandSegmentSizes = array<i32: 1, 1, 1, 2>} : (!Acc, !C, memref<72xf16>, index, index) -> ()
  return
}

func.func private @bias_relu(%acc: f32, %bias: f16) -> f16 {
  %b = arith.extf %bias : f16 to f32
  %s = arith.addf %acc, %b : f32
  %zero = arith.constant 0.0 : f32
  %r = arith.maximumf %s, %zero : f32
  %h = arith.truncf %r : f32 to f16
  return %h : f16
}
