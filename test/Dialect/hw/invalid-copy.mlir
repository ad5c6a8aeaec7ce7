// RUN: lamina-opt %s --split-input-file --verify-diagnostics

// Copies move a box between two memory spaces, with one index per dim of
// the buffer and per leading dim of the tile.

func.func @same_space(%a: memref<64x64xf16>, %b: memref<64x64xf16>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'hw.copy' op copies from global memory to global memory; a copy moves a tile between two memory spaces}}
  "hw.copy"(%a, %b, %c0, %c0, %c0, %c0) : (memref<64x64xf16>, memref<64x64xf16>, index, index, index, index) -> ()
  return
}

// -----

func.func @index_count(%a: memref<64x64xf16>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %s = "hw.alloc"() : () -> memref<2x32x32xf16, #gpu.address_space<workgroup>>
  // expected-error @+1 {{'hw.copy' op hw.copy expects 3 indices (2 for the source memref<64x64xf16>, every dim; 1 for the destination memref<2x32x32xf16, #gpu.address_space<workgroup>>, its leading dims), got 2}}
  "hw.copy"(%a, %s, %c0, %c0) : (memref<64x64xf16>, memref<2x32x32xf16, #gpu.address_space<workgroup>>, index, index) -> ()
  return
}

// -----

func.func @dtypes(%a: memref<64x64xf32>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %s = "hw.alloc"() : () -> memref<32x32xf16, #gpu.address_space<workgroup>>
  // expected-error @+1 {{'hw.copy' op element types differ: f32 vs f16}}
  "hw.copy"(%a, %s, %c0, %c0) : (memref<64x64xf32>, memref<32x32xf16, #gpu.address_space<workgroup>>, index, index) -> ()
  return
}

// -----

func.func @box_does_not_fit() attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %s = "hw.alloc"() : () -> memref<32x32xf16, #gpu.address_space<workgroup>>
  %r = "hw.alloc"() : () -> memref<64x16xf16, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.copy' op the 64x16 box of memref<64x16xf16, #gpu.address_space<private>> does not fit in memref<32x32xf16, #gpu.address_space<workgroup>>}}
  "hw.copy"(%s, %r, %c0, %c0) : (memref<32x32xf16, #gpu.address_space<workgroup>>, memref<64x16xf16, #gpu.address_space<private>>, index, index) -> ()
  return
}

// -----

func.func @box_rank(%v: memref<64xf16>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %s = "hw.alloc"() : () -> memref<8x8xf16, #gpu.address_space<workgroup>>
  // expected-error @+1 {{'hw.copy' op the 8x8 box of memref<8x8xf16, #gpu.address_space<workgroup>> does not fit the rank of memref<64xf16>}}
  "hw.copy"(%v, %s, %c0) : (memref<64xf16>, memref<8x8xf16, #gpu.address_space<workgroup>>, index) -> ()
  return
}

// -----

func.func @async_to_registers(%a: memref<64x64xf16>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %r = "hw.alloc"() : () -> memref<32x32xf16, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.async_copy' op operand #1 is in private memory; expected workgroup memory (#gpu.address_space<workgroup>)}}
  %t = "hw.async_copy"(%a, %r, %c0, %c0) : (memref<64x64xf16>, memref<32x32xf16, #gpu.address_space<private>>, index, index) -> !hw.token
  return
}

// -----

func.func @async_token(%a: memref<64x64xf16>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %s = "hw.alloc"() : () -> memref<32x32xf16, #gpu.address_space<workgroup>>
  // expected-error @+1 {{'hw.async_copy' op result has type index; expected !hw.token}}
  %t = "hw.async_copy"(%a, %s, %c0, %c0) : (memref<64x64xf16>, memref<32x32xf16, #gpu.address_space<workgroup>>, index, index) -> index
  return
}

// -----

func.func @tma_from_shared(%bar: !hw.mbarrier) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %s = "hw.alloc"() : () -> memref<32x32xf16, #gpu.address_space<workgroup>>
  %t = "hw.alloc"() : () -> memref<32x32xf16, #gpu.address_space<workgroup>>
  // expected-error @+1 {{'hw.tma_load' op operand #0 is in workgroup memory; expected global memory (no memory space)}}
  "hw.tma_load"(%s, %t, %bar, %c0) : (memref<32x32xf16, #gpu.address_space<workgroup>>, memref<32x32xf16, #gpu.address_space<workgroup>>, !hw.mbarrier, index) -> ()
  return
}

// -----

func.func @commit_nothing() attributes {hw.kernel} {
  // expected-error @+1 {{'hw.commit' op expects at least one operand}}
  "hw.commit"() : () -> ()
  return
}

// -----

func.func @wait_negative() attributes {hw.kernel} {
  // expected-error @+1 {{'hw.wait' op 'pending' must be >= 0, got -1}}
  "hw.wait"() {pending = -1 : i64} : () -> ()
  return
}
