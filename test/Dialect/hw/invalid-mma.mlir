// RUN: lamina-opt %s --split-input-file --verify-diagnostics

// The tensor-core MMA takes shared A (MxK) and B (KxN) and a register C
// (MxN), f16/bf16 -> f32 or tf32.

func.func @shapes() attributes {hw.kernel} {
  %a = "hw.alloc"() : () -> memref<64x32xf16, #gpu.address_space<workgroup>>
  %b = "hw.alloc"() : () -> memref<16x64xf16, #gpu.address_space<workgroup>>
  %c = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.mma' op mma shapes do not match: A 64x32, B 16x64, C 64x64 (expected A MxK, B KxN, C MxN)}}
  "hw.mma"(%a, %b, %c) : (memref<64x32xf16, #gpu.address_space<workgroup>>, memref<16x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

func.func @mixed_types() attributes {hw.kernel} {
  %a = "hw.alloc"() : () -> memref<64x32xf16, #gpu.address_space<workgroup>>
  %b = "hw.alloc"() : () -> memref<32x64xbf16, #gpu.address_space<workgroup>>
  %c = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.mma' op mma takes f16 x f16 -> f32, bf16 x bf16 -> f32 or f32 x f32 -> f32 (tf32); got f16 x bf16 -> f32}}
  "hw.mma"(%a, %b, %c) : (memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xbf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

func.func @f16_accumulator() attributes {hw.kernel} {
  %a = "hw.alloc"() : () -> memref<64x32xf16, #gpu.address_space<workgroup>>
  %b = "hw.alloc"() : () -> memref<32x64xf16, #gpu.address_space<workgroup>>
  %c = "hw.alloc"() : () -> memref<64x64xf16, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.mma' op operand #2 has element type f16; expected f32}}
  "hw.mma"(%a, %b, %c) : (memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<private>>) -> ()
  return
}

// -----

func.func @operands_in_registers() attributes {hw.kernel} {
  %a = "hw.alloc"() : () -> memref<64x32xf16, #gpu.address_space<private>>
  %b = "hw.alloc"() : () -> memref<32x64xf16, #gpu.address_space<workgroup>>
  %c = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.mma' op operand #0 is in private memory; expected workgroup memory (#gpu.address_space<workgroup>)}}
  "hw.mma"(%a, %b, %c) : (memref<64x32xf16, #gpu.address_space<private>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

func.func @stage_indices() attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %a = "hw.alloc"() : () -> memref<2x64x32xf16, #gpu.address_space<workgroup>>
  %b = "hw.alloc"() : () -> memref<2x32x64xf16, #gpu.address_space<workgroup>>
  %c = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.mma' op hw.mma expects 2 indices (1 for A's and 1 for B's leading dims), got 1}}
  "hw.mma"(%a, %b, %c, %c0) : (memref<2x64x32xf16, #gpu.address_space<workgroup>>, memref<2x32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #gpu.address_space<private>>, index) -> ()
  return
}

// -----

// A transposed operand is stored transposed: A as KxM, B as NxK.
func.func @transposed_shapes() attributes {hw.kernel} {
  %a = "hw.alloc"() : () -> memref<64x32xf16, #gpu.address_space<workgroup>>
  %b = "hw.alloc"() : () -> memref<32x64xf16, #gpu.address_space<workgroup>>
  %c = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.mma' op mma shapes do not match: A 64x32, B 32x64, C 64x64 (expected A MxK, B NxK, C MxN)}}
  "hw.mma"(%a, %b, %c) {transpose_b = true} : (memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

func.func @split_f16() attributes {hw.kernel} {
  %a = "hw.alloc"() : () -> memref<64x32xf16, #gpu.address_space<workgroup>>
  %b = "hw.alloc"() : () -> memref<32x64xf16, #gpu.address_space<workgroup>>
  %c = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.mma' op precision = "3xtf32" is for f32 operands, not f16}}
  "hw.mma"(%a, %b, %c) {precision = "3xtf32"} : (memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

func.func @wgmma_transposed() attributes {hw.kernel} {
  %a = "hw.alloc"() : () -> memref<64x64xf16, #gpu.address_space<workgroup>>
  %b = "hw.alloc"() : () -> memref<64x64xf16, #gpu.address_space<workgroup>>
  %c = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.mma' op wgmma here reads A as MxK and B as KxN; transposed operands are read by mma.sync}}
  "hw.mma"(%a, %b, %c) {instruction = "wgmma", transpose_a = true} : (memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  return
}
