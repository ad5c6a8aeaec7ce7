// RUN: lamina-opt %s --split-input-file --convert-hw-to-nvgpu=chip=sm_80 --canonicalize | FileCheck %s

// Attention's ops on the GPU, 4 warps stacked along the rows (warps =
// [4, 1]): the scores' B^T (K as stored, N x K) is loaded by ldmatrix x4
// untransposed; the mask selects -inf; a row maximum folds each thread's
// 16 elements of each of its two rows, then the row's four threads by
// shuffles at distances 1 and 2 (no shuffle crosses the row's quad), into
// the thread's two row statistics, which hw.sub broadcasts over the rows.
// The kernel's blocks per SM (hw.min_blocks_per_sm) become nvvm.minctasm.
// CHECK-LABEL: gpu.func @rows
// CHECK-SAME: nvvm.minctasm = 1 : i64
// CHECK-DAG: %[[NEG:.+]] = arith.constant 0xFF800000 : f32
// CHECK: nvgpu.ldmatrix %{{.+}} {numTiles = 4 : i32, transpose = false} : memref<64x32xf16, #gpu.address_space<workgroup>> -> vector<4x2xf16>
// CHECK: nvvm.mma.sync
// CHECK: arith.select %{{.+}}, %[[NEG]], %{{.+}} : f32
// CHECK: gpu.shuffle  xor %{{.+}}, %c1_i32, %c32_i32 : f32
// CHECK: arith.maximumf
// CHECK: gpu.shuffle  xor %{{.+}}, %c2_i32, %c32_i32 : f32
// CHECK: gpu.shuffle  xor %{{.+}}, %c1_i32, %c32_i32 : f32
// CHECK: gpu.shuffle  xor %{{.+}}, %c2_i32, %c32_i32 : f32
// CHECK-NOT: gpu.shuffle
// CHECK: arith.subf
func.func @main(%k: memref<64x32xf16>, %x: memref<64x64xf32>) {
  "hw.launch"(%k, %x) {kernel = @rows, grid = array<i64: 1>, block = array<i64: 128>} : (memref<64x32xf16>, memref<64x64xf32>) -> ()
  return
}
func.func @rows(%k: memref<64x32xf16>, %x: memref<64x64xf32>) attributes {hw.kernel, hw.min_blocks_per_sm = 1 : i64} {
  %c0 = arith.constant 0 : index
  %ks = "hw.alloc"() : () -> memref<64x32xf16, #gpu.address_space<workgroup>>
  %s = "hw.alloc"() {warps = array<i64: 4, 1>} : () -> memref<64x64xf32, #gpu.address_space<private>>
  %m = "hw.alloc"() {warps = array<i64: 4, 1>} : () -> memref<64x1xf32, #gpu.address_space<private>>
  "hw.copy"(%k, %ks, %c0, %c0) : (memref<64x32xf16>, memref<64x32xf16, #gpu.address_space<workgroup>>, index, index) -> ()
  "hw.barrier"() : () -> ()
  "hw.fill"(%s) : (memref<64x64xf32, #gpu.address_space<private>>) -> ()
  "hw.contract"(%ks, %ks, %s) {transpose_b = true} : (memref<64x32xf16, #gpu.address_space<workgroup>>, memref<64x32xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  "hw.mask"(%s, %c0, %c0) {keys = 50 : i64, causal = true} : (memref<64x64xf32, #gpu.address_space<private>>, index, index) -> ()
  "hw.reduce_max"(%s, %m) : (memref<64x64xf32, #gpu.address_space<private>>, memref<64x1xf32, #gpu.address_space<private>>) -> ()
  "hw.sub"(%s, %m, %s) : (memref<64x64xf32, #gpu.address_space<private>>, memref<64x1xf32, #gpu.address_space<private>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  "hw.store"(%s, %x, %c0, %c0) {operandSegmentSizes = array<i32: 1, 1, 0, 2>} : (memref<64x64xf32, #gpu.address_space<private>>, memref<64x64xf32>, index, index) -> ()
  return
}

// -----

// P V with P from registers: A's registers are pairs of the f16 register
// tile's slots (vector.from_elements), not ldmatrix loads; V (K x N) is
// loaded transposed.
// CHECK-LABEL: gpu.func @register_a
// CHECK-NOT: transpose = false
// CHECK: %[[A0:.+]] = vector.from_elements %{{.+}}, %{{.+}} : vector<2xf16>
// CHECK: nvgpu.ldmatrix %{{.+}} {numTiles = 4 : i32, transpose = true}
// CHECK: nvvm.mma.sync A[%[[A0]],
func.func @main(%v: memref<64x32xf16>) {
  "hw.launch"(%v) {kernel = @register_a, grid = array<i64: 1>, block = array<i64: 128>} : (memref<64x32xf16>) -> ()
  return
}
func.func @register_a(%v: memref<64x32xf16>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %vs = "hw.alloc"() : () -> memref<64x32xf16, #gpu.address_space<workgroup>>
  %p = "hw.alloc"() {warps = array<i64: 4, 1>} : () -> memref<64x64xf16, #gpu.address_space<private>>
  %o = "hw.alloc"() {warps = array<i64: 4, 1>} : () -> memref<64x32xf32, #gpu.address_space<private>>
  "hw.copy"(%v, %vs, %c0, %c0) : (memref<64x32xf16>, memref<64x32xf16, #gpu.address_space<workgroup>>, index, index) -> ()
  "hw.barrier"() : () -> ()
  "hw.fill"(%p) {value = 1.0 : f64} : (memref<64x64xf16, #gpu.address_space<private>>) -> ()
  "hw.fill"(%o) : (memref<64x32xf32, #gpu.address_space<private>>) -> ()
  "hw.contract"(%p, %vs, %o) : (memref<64x64xf16, #gpu.address_space<private>>, memref<64x32xf16, #gpu.address_space<workgroup>>, memref<64x32xf32, #gpu.address_space<private>>) -> ()
  "hw.store"(%o, %v, %c0, %c0) {operandSegmentSizes = array<i32: 1, 1, 0, 2>} : (memref<64x32xf32, #gpu.address_space<private>>, memref<64x32xf16>, index, index) -> ()
  return
}

// -----

// On CUDA cores: a loop over k of shared loads, one per row and column the
// thread holds, and a fused multiply-add per element; no tensor cores.
// CHECK-LABEL: gpu.func @fma
// CHECK: scf.for
// CHECK: memref.load %{{.+}} : memref<64x20xf32, #gpu.address_space<workgroup>>
// CHECK: math.fma %{{.+}}, %{{.+}}, %{{.+}} : f32
// CHECK-NOT: nvvm.mma.sync
func.func @main(%a: memref<64x20xf32>) {
  "hw.launch"(%a) {kernel = @fma, grid = array<i64: 1>, block = array<i64: 128>} : (memref<64x20xf32>) -> ()
  return
}
func.func @fma(%a: memref<64x20xf32>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %as = "hw.alloc"() : () -> memref<64x20xf32, #gpu.address_space<workgroup>>
  %s = "hw.alloc"() {warps = array<i64: 4, 1>} : () -> memref<64x64xf32, #gpu.address_space<private>>
  "hw.copy"(%a, %as, %c0, %c0) : (memref<64x20xf32>, memref<64x20xf32, #gpu.address_space<workgroup>>, index, index) -> ()
  "hw.barrier"() : () -> ()
  "hw.fill"(%s) : (memref<64x64xf32, #gpu.address_space<private>>) -> ()
  "hw.contract"(%as, %as, %s) {transpose_b = true, unit = "fma"} : (memref<64x20xf32, #gpu.address_space<workgroup>>, memref<64x20xf32, #gpu.address_space<workgroup>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  "hw.store"(%s, %a, %c0, %c0) {operandSegmentSizes = array<i32: 1, 1, 0, 2>} : (memref<64x64xf32, #gpu.address_space<private>>, memref<64x20xf32>, index, index) -> ()
  return
}
