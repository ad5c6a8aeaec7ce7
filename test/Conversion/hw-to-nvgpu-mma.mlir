// RUN: lamina-opt %s --split-input-file --convert-hw-to-nvgpu=chip=sm_80 | FileCheck %s

// hw.mma on mma.sync: f32 operands split for 3xTF32 (big = the operand
// rounded to tf32, small = the residual rounded; three m16n8k8 products
// per fragment, the small ones first), rounded for tf32_rounded (one
// product), passed as they are for tf32 (the tensor cores drop the low
// bits); operands stored transposed read in place: f16 B (N x K) by
// ldmatrix without transposing, A (K x M) by ldmatrix transposed.

// CHECK-LABEL: gpu.func @split
// CHECK: %[[A:.+]] = memref.load %{{.+}} : memref<16x8xf32, #gpu.address_space<workgroup>>
// CHECK: %[[BITS:.+]] = arith.bitcast %[[A]] : f32 to i32
// CHECK: %[[UP:.+]] = arith.addi %[[BITS]], %c4096_i32{{[_0-9]*}} : i32
// CHECK: %[[KEPT:.+]] = arith.andi %[[UP]], %c-8192_i32{{[_0-9]*}} : i32
// CHECK: %[[BIG:.+]] = arith.bitcast %[[KEPT]] : i32 to f32
// CHECK: arith.subf %[[A]], %[[BIG]] : f32
// CHECK-COUNT-3: nvvm.mma.sync {{.+}} shape = #nvvm.shape<m = 16, n = 8, k = 8>
// CHECK-NOT: nvvm.mma.sync
// CHECK: gpu.return
func.func @split(%out: memref<16x8xf32>) attributes {hw.kernel} {
  %a = "hw.alloc"() : () -> memref<16x8xf32, #gpu.address_space<workgroup>>
  %b = "hw.alloc"() : () -> memref<8x8xf32, #gpu.address_space<workgroup>>
  %c = "hw.alloc"() : () -> memref<16x8xf32, #gpu.address_space<private>>
  "hw.mma"(%a, %b, %c) {precision = "3xtf32"} : (memref<16x8xf32, #gpu.address_space<workgroup>>, memref<8x8xf32, #gpu.address_space<workgroup>>, memref<16x8xf32, #gpu.address_space<private>>) -> ()
  return
}
func.func @main(%out: memref<16x8xf32>) {
  "hw.launch"(%out) {kernel = @split, grid = array<i64: 1>, block = array<i64: 32>} : (memref<16x8xf32>) -> ()
  return
}

// -----

// CHECK-LABEL: gpu.func @rounded
// CHECK: arith.addi %{{.+}}, %c4096_i32{{[_0-9]*}} : i32
// CHECK-NOT: arith.subf
// CHECK: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK: gpu.return
func.func @rounded(%out: memref<16x8xf32>) attributes {hw.kernel} {
  %a = "hw.alloc"() : () -> memref<16x8xf32, #gpu.address_space<workgroup>>
  %b = "hw.alloc"() : () -> memref<8x8xf32, #gpu.address_space<workgroup>>
  %c = "hw.alloc"() : () -> memref<16x8xf32, #gpu.address_space<private>>
  "hw.mma"(%a, %b, %c) {precision = "tf32_rounded"} : (memref<16x8xf32, #gpu.address_space<workgroup>>, memref<8x8xf32, #gpu.address_space<workgroup>>, memref<16x8xf32, #gpu.address_space<private>>) -> ()
  return
}
func.func @main(%out: memref<16x8xf32>) {
  "hw.launch"(%out) {kernel = @rounded, grid = array<i64: 1>, block = array<i64: 32>} : (memref<16x8xf32>) -> ()
  return
}

// -----

// CHECK-LABEL: gpu.func @truncated
// CHECK-NOT: arith.addi %{{.+}}, %c4096_i32
// CHECK-NOT: arith.andi
// CHECK: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK: gpu.return
func.func @truncated(%out: memref<16x8xf32>) attributes {hw.kernel} {
  %a = "hw.alloc"() : () -> memref<16x8xf32, #gpu.address_space<workgroup>>
  %b = "hw.alloc"() : () -> memref<8x8xf32, #gpu.address_space<workgroup>>
  %c = "hw.alloc"() : () -> memref<16x8xf32, #gpu.address_space<private>>
  "hw.mma"(%a, %b, %c) : (memref<16x8xf32, #gpu.address_space<workgroup>>, memref<8x8xf32, #gpu.address_space<workgroup>>, memref<16x8xf32, #gpu.address_space<private>>) -> ()
  return
}
func.func @main(%out: memref<16x8xf32>) {
  "hw.launch"(%out) {kernel = @truncated, grid = array<i64: 1>, block = array<i64: 32>} : (memref<16x8xf32>) -> ()
  return
}

// -----

// CHECK-LABEL: gpu.func @transposed_b
// CHECK: nvgpu.ldmatrix %{{.+}} {numTiles = 4 : i32, transpose = false} : memref<16x16xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// CHECK: nvgpu.ldmatrix %{{.+}} {numTiles = 4 : i32, transpose = false} : memref<16x16xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// CHECK-COUNT-2: nvvm.mma.sync {{.+}} shape = #nvvm.shape<m = 16, n = 8, k = 16>
func.func @transposed_b(%out: memref<16x8xf32>) attributes {hw.kernel} {
  %a = "hw.alloc"() : () -> memref<16x16xf16, #gpu.address_space<workgroup>>
  %b = "hw.alloc"() : () -> memref<16x16xf16, #gpu.address_space<workgroup>>
  %c = "hw.alloc"() : () -> memref<16x16xf32, #gpu.address_space<private>>
  "hw.mma"(%a, %b, %c) {transpose_b = true} : (memref<16x16xf16, #gpu.address_space<workgroup>>, memref<16x16xf16, #gpu.address_space<workgroup>>, memref<16x16xf32, #gpu.address_space<private>>) -> ()
  return
}
func.func @main(%out: memref<16x8xf32>) {
  "hw.launch"(%out) {kernel = @transposed_b, grid = array<i64: 1>, block = array<i64: 32>} : (memref<16x8xf32>) -> ()
  return
}

// -----

// CHECK-LABEL: gpu.func @transposed_a
// CHECK: nvgpu.ldmatrix %{{.+}} {numTiles = 4 : i32, transpose = true} : memref<16x16xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// CHECK: nvgpu.ldmatrix %{{.+}} {numTiles = 2 : i32, transpose = true} : memref<16x8xf16, #gpu.address_space<workgroup>> -> vector<2x2xf16>
func.func @transposed_a(%out: memref<16x8xf32>) attributes {hw.kernel} {
  %a = "hw.alloc"() : () -> memref<16x16xf16, #gpu.address_space<workgroup>>
  %b = "hw.alloc"() : () -> memref<16x8xf16, #gpu.address_space<workgroup>>
  %c = "hw.alloc"() : () -> memref<16x8xf32, #gpu.address_space<private>>
  "hw.mma"(%a, %b, %c) {transpose_a = true} : (memref<16x16xf16, #gpu.address_space<workgroup>>, memref<16x8xf16, #gpu.address_space<workgroup>>, memref<16x8xf32, #gpu.address_space<private>>) -> ()
  return
}
func.func @main(%out: memref<16x8xf32>) {
  "hw.launch"(%out) {kernel = @transposed_a, grid = array<i64: 1>, block = array<i64: 32>} : (memref<16x8xf32>) -> ()
  return
}
