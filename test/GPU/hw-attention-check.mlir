// RUN: lamina-opt %s --split-input-file --hw-check=chip=sm_80 --verify-diagnostics

// hw-check on attention's ops: hw.contract on tensor cores has mma.sync's
// shapes and a register A whose warps hold the accumulator's rows; row
// reductions are of accumulators whose warps hold whole rows, into their
// row statistics.

func.func @main(%x: memref<64x64xf16>) {
  "hw.launch"(%x) {kernel = @fragments, grid = array<i64: 1>, block = array<i64: 128>} : (memref<64x64xf16>) -> ()
  return
}
func.func @fragments(%x: memref<64x64xf16>) attributes {hw.kernel} {
  %q = "hw.alloc"() : () -> memref<64x24xf16, #gpu.address_space<workgroup>>
  %k = "hw.alloc"() : () -> memref<64x24xf16, #gpu.address_space<workgroup>>
  %s = "hw.alloc"() {warps = array<i64: 4, 1>} : () -> memref<64x64xf32, #gpu.address_space<private>>
  // expected-error @+1 {{tensor cores multiply 16x16 by 16x8 f16 fragments: M = 64 must be a multiple of 16, N = 64 of 8 and K = 24 of 16}}
  "hw.contract"(%q, %k, %s) {transpose_b = true} : (memref<64x24xf16, #gpu.address_space<workgroup>>, memref<64x24xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

func.func @main(%x: memref<64x64xf16>) {
  "hw.launch"(%x) {kernel = @register_a, grid = array<i64: 1>, block = array<i64: 128>} : (memref<64x64xf16>) -> ()
  return
}
func.func @register_a(%x: memref<64x64xf16>) attributes {hw.kernel} {
  %p = "hw.alloc"() : () -> memref<64x64xf16, #gpu.address_space<private>>
  %v = "hw.alloc"() : () -> memref<64x32xf16, #gpu.address_space<workgroup>>
  %o = "hw.alloc"() {warps = array<i64: 4, 1>} : () -> memref<64x32xf32, #gpu.address_space<private>>
  // expected-error @+1 {{A is a register tile whose warps do not hold the rows of the accumulator's warps: allocate both with warps = [W, 1]}}
  "hw.contract"(%p, %v, %o) : (memref<64x64xf16, #gpu.address_space<private>>, memref<64x32xf16, #gpu.address_space<workgroup>>, memref<64x32xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

func.func @main(%x: memref<64x64xf16>) {
  "hw.launch"(%x) {kernel = @row_statistics, grid = array<i64: 1>, block = array<i64: 128>} : (memref<64x64xf16>) -> ()
  return
}
func.func @row_statistics(%x: memref<64x64xf16>) attributes {hw.kernel} {
  %s = "hw.alloc"() {warps = array<i64: 4, 1>} : () -> memref<64x64xf32, #gpu.address_space<private>>
  %m = "hw.alloc"() : () -> memref<64x1xf32, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.reduce_max' reduces the rows of an accumulator tile whose warps hold whole rows into their row statistics: allocate both with warps = [4, 1]}}
  "hw.reduce_max"(%s, %m) : (memref<64x64xf32, #gpu.address_space<private>>, memref<64x1xf32, #gpu.address_space<private>>) -> ()
  return
}
