// Kernels for hw-check on sm_90a (see ../hw-check.mlir).

func.func @main(%a: memref<512x64xf16>) {
  "hw.launch"(%a) {kernel = @boxes, grid = array<i64: 1>, block = array<i64: 128>} : (memref<512x64xf16>) -> ()
  return
}
func.func @boxes(%a: memref<512x64xf16>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %bar = "hw.mbarrier_init"() : () -> !hw.mbarrier
  %big = "hw.alloc"() : () -> memref<320x64xf16, #gpu.address_space<workgroup>>
  %narrow = "hw.alloc"() : () -> memref<64x4xf16, #gpu.address_space<workgroup>>
  // expected-error @+1 {{a TMA box has at most 256 rows, not 320}}
  "hw.tma_load"(%a, %big, %bar, %c0, %c0, %c0) : (memref<512x64xf16>, memref<320x64xf16, #gpu.address_space<workgroup>>, !hw.mbarrier, index, index, index) -> ()
  // expected-error @+1 {{a TMA box row is a multiple of 16 bytes, not 8 (4 x f16)}}
  "hw.tma_load"(%a, %narrow, %bar, %c0, %c0, %c0) : (memref<512x64xf16>, memref<64x4xf16, #gpu.address_space<workgroup>>, !hw.mbarrier, index, index, index) -> ()
  return
}

// -----

func.func @main(%a: memref<128x100xf16>) {
  "hw.launch"(%a) {kernel = @global_rows, grid = array<i64: 1>, block = array<i64: 128>} : (memref<128x100xf16>) -> ()
  return
}
func.func @global_rows(%a: memref<128x100xf16>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %bar = "hw.mbarrier_init"() : () -> !hw.mbarrier
  %s = "hw.alloc"() : () -> memref<64x64xf16, #gpu.address_space<workgroup>>
  // expected-error @+1 {{TMA needs global rows of a multiple of 16 bytes; rows of memref<128x100xf16> are 200}}
  "hw.tma_load"(%a, %s, %bar, %c0, %c0, %c0) : (memref<128x100xf16>, memref<64x64xf16, #gpu.address_space<workgroup>>, !hw.mbarrier, index, index, index) -> ()
  return
}

// -----

func.func @main(%a: memref<128x64xf16>) {
  "hw.launch"(%a) {kernel = @not_wgmma, grid = array<i64: 1>, block = array<i64: 128>} : (memref<128x64xf16>) -> ()
  return
}
func.func @not_wgmma(%a: memref<128x64xf16>) attributes {hw.kernel} {
  %as = "hw.alloc"() : () -> memref<64x64xf16, #gpu.address_space<workgroup>>
  %bs = "hw.alloc"() : () -> memref<64x64xf16, #gpu.address_space<workgroup>>
  %acc = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  // expected-error @+1 {{this MMA cannot be a wgmma: its A and B tiles must be loaded by hw.tma_load with rows of at least 128 bytes (swizzled)}}
  "hw.mma"(%as, %bs, %acc) {instruction = "wgmma"} : (memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// A TMA-fed wgmma and a budget that fits sm_90a.
func.func @main(%a: memref<128x64xf16>, %b: memref<64x128xf16>) {
  "hw.launch"(%a, %b) {kernel = @fits, grid = array<i64: 1>, block = array<i64: 128>} : (memref<128x64xf16>, memref<64x128xf16>) -> ()
  return
}
func.func @fits(%a: memref<128x64xf16>, %b: memref<64x128xf16>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %bar = "hw.mbarrier_init"() {count = 2 : i64} : () -> !hw.mbarrier
  %as = "hw.alloc"() : () -> memref<4x128x64xf16, #gpu.address_space<workgroup>>
  %bs = "hw.alloc"() : () -> memref<4x64x128xf16, #gpu.address_space<workgroup>>
  %acc = "hw.alloc"() : () -> memref<128x128xf32, #gpu.address_space<private>>
  "hw.tma_load"(%a, %as, %bar, %c0, %c0, %c0, %c0) : (memref<128x64xf16>, memref<4x128x64xf16, #gpu.address_space<workgroup>>, !hw.mbarrier, index, index, index, index) -> ()
  "hw.tma_load"(%b, %bs, %bar, %c0, %c0, %c0, %c0) : (memref<64x128xf16>, memref<4x64x128xf16, #gpu.address_space<workgroup>>, !hw.mbarrier, index, index, index, index) -> ()
  "hw.mbarrier_wait"(%bar, %c0, %c0) : (!hw.mbarrier, index, index) -> ()
  "hw.mma"(%as, %bs, %acc, %c0, %c0) {instruction = "wgmma"} : (memref<4x128x64xf16, #gpu.address_space<workgroup>>, memref<4x64x128xf16, #gpu.address_space<workgroup>>, memref<128x128xf32, #gpu.address_space<private>>, index, index) -> ()
  return
}
