// RUN: lamina-opt %s --split-input-file --hw-check=chip=sm_80 --verify-diagnostics
// RUN: lamina-opt %S/Inputs/hw-check-sm90a.mlir --split-input-file --hw-check=chip=sm_90a --verify-diagnostics
// RUN: lamina-opt %S/../Dialect/hw/round-trip.mlir --hw-check=chip=sm_90a > /dev/null
// RUN: not lamina-opt %S/Inputs/hw-check-sm90a.mlir --split-input-file --hw-check=chip=sm_80 2>&1 | FileCheck %s --check-prefix=SM80

// What a kernel asks of the architecture is checked at its ops, on sm_80
// here and on sm_90a in Inputs/hw-check-sm90a.mlir (whose TMA loads and
// wgmma sm_80 rejects).

// SM80: error: 'hw.mbarrier_init' needs sm_90 and PTX 7.8 (mbarrier.try_wait.parity); target cuda:sm_80 is sm_80 with PTX 7.0
// SM80: error: 'hw.tma_load' needs sm_90 and PTX 8.0 (cp.async.bulk.tensor); target cuda:sm_80 is sm_80 with PTX 7.0

func.func @main(%a: memref<256x512xf16>) {
  "hw.launch"(%a) {kernel = @over_budget, grid = array<i64: 1>, block = array<i64: 128>} : (memref<256x512xf16>) -> ()
  return
}
func.func @over_budget(%a: memref<256x512xf16>) attributes {hw.kernel} {
  %as = "hw.alloc"() : () -> memref<3x128x128xf16, #gpu.address_space<workgroup>>
  // expected-error @+1 {{the shared tiles of this kernel need 196608 bytes up to this one; a block on sm_80 has at most 166912 (163 KiB)}}
  %bs = "hw.alloc"() : () -> memref<3x128x128xf16, #gpu.address_space<workgroup>>
  return
}

// -----

func.func @odd_rows(%a: memref<100x33xf16>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %s = "hw.alloc"() : () -> memref<64x32xf16, #gpu.address_space<workgroup>>
  // expected-error @+1 {{misaligned async copy: cp.async moves 4, 8 or 16 bytes per thread, and the rows of memref<100x33xf16> (66 bytes) are not a multiple of 4 bytes}}
  %t = "hw.async_copy"(%a, %s, %c0, %c0) : (memref<100x33xf16>, memref<64x32xf16, #gpu.address_space<workgroup>>, index, index) -> !hw.token
  return
}

// -----

func.func @odd_column(%a: memref<100x64xf16>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %s = "hw.alloc"() : () -> memref<64x32xf16, #gpu.address_space<workgroup>>
  // expected-error @+1 {{misaligned async copy: column 4 of memref<100x64xf16> is not a multiple of the 16-byte chunks (8 elements) each thread copies}}
  %t = "hw.async_copy"(%a, %s, %c0, %c4) : (memref<100x64xf16>, memref<64x32xf16, #gpu.address_space<workgroup>>, index, index) -> !hw.token
  return
}

// -----

func.func @wgmma() attributes {hw.kernel} {
  %as = "hw.alloc"() : () -> memref<64x64xf16, #gpu.address_space<workgroup>>
  %bs = "hw.alloc"() : () -> memref<64x64xf16, #gpu.address_space<workgroup>>
  %acc = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.mma' with instruction = "wgmma" needs sm_90a and PTX 8.0 (wgmma.mma_async); target cuda:sm_80 is sm_80 with PTX 7.0}}
  "hw.mma"(%as, %bs, %acc) {instruction = "wgmma"} : (memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

func.func @mma_shape() attributes {hw.kernel} {
  %as = "hw.alloc"() : () -> memref<64x24xf16, #gpu.address_space<workgroup>>
  %bs = "hw.alloc"() : () -> memref<24x64xf16, #gpu.address_space<workgroup>>
  %acc = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  // expected-error @+1 {{tensor cores multiply 16x16 by 16x8 f16 fragments: M = 64 must be a multiple of 16, N = 64 of 8 and K = 24 of 16}}
  "hw.mma"(%as, %bs, %acc) : (memref<64x24xf16, #gpu.address_space<workgroup>>, memref<24x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

func.func @main(%x: memref<8xf32>) {
  "hw.launch"(%x) {kernel = @warps, grid = array<i64: 1>, block = array<i64: 256>} : (memref<8xf32>) -> ()
  return
}
func.func @warps(%x: memref<8xf32>) attributes {hw.kernel} {
  %as = "hw.alloc"() : () -> memref<16x16xf16, #gpu.address_space<workgroup>>
  %bs = "hw.alloc"() : () -> memref<16x8xf16, #gpu.address_space<workgroup>>
  %acc = "hw.alloc"() : () -> memref<16x8xf32, #gpu.address_space<private>>
  // expected-error @+1 {{the 8 warps of the block cannot divide the 16x8 accumulator into 16x8 fragments evenly (each warp takes whole fragments)}}
  "hw.mma"(%as, %bs, %acc) : (memref<16x16xf16, #gpu.address_space<workgroup>>, memref<16x8xf16, #gpu.address_space<workgroup>>, memref<16x8xf32, #gpu.address_space<private>>) -> ()
  return
}
