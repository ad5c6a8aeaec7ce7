// RUN: lamina-opt %s --split-input-file --hw-check-hazards --verify-diagnostics

// hw-check-hazards on an implicit GEMM's K loop: hw.im2col writes all over
// its shared tile, so the MMA that reads it needs a barrier after it, and
// the next step's gather a barrier after the MMA.
func.func @main(%x: memref<1x8x8x16xf16>, %w: memref<24x144xf16>, %y: memref<64x24xf16>) {
  "hw.launch"(%x, %w, %y) {kernel = @implicit_gemm, grid = array<i64: 1, 1>, block = array<i64: 128>} : (memref<1x8x8x16xf16>, memref<24x144xf16>, memref<64x24xf16>) -> ()
  return
}
func.func @implicit_gemm(%x: memref<1x8x8x16xf16>, %w: memref<24x144xf16>, %y: memref<64x24xf16>) attributes {hw.kernel} {
  %a = "hw.alloc"() : () -> memref<64x32xf16, #gpu.address_space<workgroup>>
  %b = "hw.alloc"() : () -> memref<64x32xf16, #gpu.address_space<workgroup>>
  %acc = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c160 = arith.constant 160 : index
  "hw.fill"(%acc) : (memref<64x64xf32, #gpu.address_space<private>>) -> ()
  scf.for %k = %c0 to %c160 step %c32 {
    "hw.im2col"(%x, %a, %c0, %k) {space = array<i64: 1, 8, 8>, window = array<i64: 3, 3>, padding = array<i64: 1, 1>, layout = "NHWC"} : (memref<1x8x8x16xf16>, memref<64x32xf16, #gpu.address_space<workgroup>>, index, index) -> ()
    "hw.copy"(%w, %b, %c0, %k) : (memref<24x144xf16>, memref<64x32xf16, #gpu.address_space<workgroup>>, index, index) -> ()
    "hw.barrier"() : () -> ()
    "hw.mma"(%a, %b, %acc) {transpose_b = true} : (memref<64x32xf16, #gpu.address_space<workgroup>>, memref<64x32xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
    "hw.barrier"() : () -> ()
  }
  "hw.store"(%acc, %y, %c0, %c0) {operandSegmentSizes = array<i32: 1, 1, 0, 2>} : (memref<64x64xf32, #gpu.address_space<private>>, memref<64x24xf16>, index, index) -> ()
  return
}

// -----

// No barrier between the gather and the MMA: other threads' elements of
// the im2col tile may not be written yet.
func.func @main(%x: memref<1x8x8x16xf16>, %w: memref<24x144xf16>) {
  "hw.launch"(%x, %w) {kernel = @no_barrier_after_gather, grid = array<i64: 1>, block = array<i64: 128>} : (memref<1x8x8x16xf16>, memref<24x144xf16>) -> ()
  return
}
func.func @no_barrier_after_gather(%x: memref<1x8x8x16xf16>, %w: memref<24x144xf16>) attributes {hw.kernel} {
  %a = "hw.alloc"() : () -> memref<64x32xf16, #gpu.address_space<workgroup>>
  %b = "hw.alloc"() : () -> memref<64x32xf16, #gpu.address_space<workgroup>>
  %acc = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  %c0 = arith.constant 0 : index
  "hw.copy"(%w, %b, %c0, %c0) : (memref<24x144xf16>, memref<64x32xf16, #gpu.address_space<workgroup>>, index, index) -> ()
  "hw.barrier"() : () -> ()
  "hw.im2col"(%x, %a, %c0, %c0) {space = array<i64: 1, 8, 8>, window = array<i64: 3, 3>, padding = array<i64: 1, 1>, layout = "NHWC"} : (memref<1x8x8x16xf16>, memref<64x32xf16, #gpu.address_space<workgroup>>, index, index) -> ()
  // expected-error @+1 {{reads shared tile memref<64x32xf16, #gpu.address_space<workgroup>>[0:64, 0:32], written by 'hw.im2col'}}
  "hw.mma"(%a, %b, %acc) {transpose_b = true} : (memref<64x32xf16, #gpu.address_space<workgroup>>, memref<64x32xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// No barrier between the MMA and the next gather into its tile: other
// threads may still be reading it.
func.func @main(%x: memref<1x8x8x16xf16>, %w: memref<24x144xf16>) {
  "hw.launch"(%x, %w) {kernel = @no_barrier_after_mma, grid = array<i64: 1>, block = array<i64: 128>} : (memref<1x8x8x16xf16>, memref<24x144xf16>) -> ()
  return
}
func.func @no_barrier_after_mma(%x: memref<1x8x8x16xf16>, %w: memref<24x144xf16>) attributes {hw.kernel} {
  %a = "hw.alloc"() : () -> memref<64x32xf16, #gpu.address_space<workgroup>>
  %b = "hw.alloc"() : () -> memref<64x32xf16, #gpu.address_space<workgroup>>
  %acc = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  "hw.copy"(%w, %b, %c0, %c0) : (memref<24x144xf16>, memref<64x32xf16, #gpu.address_space<workgroup>>, index, index) -> ()
  "hw.im2col"(%x, %a, %c0, %c0) {space = array<i64: 1, 8, 8>, window = array<i64: 3, 3>, padding = array<i64: 1, 1>, layout = "NHWC"} : (memref<1x8x8x16xf16>, memref<64x32xf16, #gpu.address_space<workgroup>>, index, index) -> ()
  "hw.barrier"() : () -> ()
  "hw.mma"(%a, %b, %acc) {transpose_b = true} : (memref<64x32xf16, #gpu.address_space<workgroup>>, memref<64x32xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  // expected-error @+1 {{writes shared tile memref<64x32xf16, #gpu.address_space<workgroup>>[0:64, 0:32]}}
  "hw.im2col"(%x, %a, %c0, %c32) {space = array<i64: 1, 8, 8>, window = array<i64: 3, 3>, padding = array<i64: 1, 1>, layout = "NHWC"} : (memref<1x8x8x16xf16>, memref<64x32xf16, #gpu.address_space<workgroup>>, index, index) -> ()
  return
}
