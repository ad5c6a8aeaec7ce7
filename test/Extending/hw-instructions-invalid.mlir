// RUN: lamina-opt %s --split-input-file --hw-check=chip=sm_80 --verify-diagnostics

// Hardware instructions are checked at the op: their operands (register
// tiles of the declared element types, of one shape) by the verifier, and
// the architecture they need by hw-check, before anything reaches LLVM
// (test/GPU/ptx-hw-instructions.mlir: accepted on sm_89 and sm_90a).

!RF = memref<16x32xf32, #gpu.address_space<private>>
!RH = memref<16x32xi16, #gpu.address_space<private>>

func.func @fp8_on_sm80() attributes {hw.kernel} {
  %hi = "hw.alloc"() : () -> !RF
  %lo = "hw.alloc"() : () -> !RF
  %out = "hw.alloc"() : () -> !RH
  // expected-error @+1 {{'hw.cvt_e4m3x2' needs sm_89 or newer; the target is sm_80}}
  "hw.cvt_e4m3x2"(%hi, %lo, %out) : (!RF, !RF, !RH) -> ()
  return
}

// -----

!R = memref<16x32xi32, #gpu.address_space<private>>

func.func @prmt_on_sm80() attributes {hw.kernel} {
  %a = "hw.alloc"() : () -> !R
  "hw.prmt"(%a, %a, %a, %a) : (!R, !R, !R, !R) -> ()
  return
}

// -----

func.func @shapes_differ() attributes {hw.kernel} {
  %a = "hw.alloc"() : () -> memref<16x32xi32, #gpu.address_space<private>>
  %s = "hw.alloc"() : () -> memref<16x16xi32, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.prmt' op tiles of different shapes: 16x32, 16x32, 16x16, 16x32}}
  "hw.prmt"(%a, %a, %s, %a) : (memref<16x32xi32, #gpu.address_space<private>>, memref<16x32xi32, #gpu.address_space<private>>, memref<16x16xi32, #gpu.address_space<private>>, memref<16x32xi32, #gpu.address_space<private>>) -> ()
  return
}

// -----

func.func @wrong_element_type() attributes {hw.kernel} {
  %x = "hw.alloc"() : () -> memref<16x32xf32, #gpu.address_space<private>>
  %out = "hw.alloc"() : () -> memref<16x32xi32, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.cvt_e4m3x2' op operand #2 has element type i32; expected i16}}
  "hw.cvt_e4m3x2"(%x, %x, %out) : (memref<16x32xf32, #gpu.address_space<private>>, memref<16x32xf32, #gpu.address_space<private>>, memref<16x32xi32, #gpu.address_space<private>>) -> ()
  return
}

// -----

func.func @shared_tile() attributes {hw.kernel} {
  %a = "hw.alloc"() : () -> memref<16x32xi32, #gpu.address_space<workgroup>>
  // expected-error @+1 {{'hw.prmt' op operand #0 is in workgroup memory; expected private memory (#gpu.address_space<private>)}}
  "hw.prmt"(%a, %a, %a, %a) : (memref<16x32xi32, #gpu.address_space<workgroup>>, memref<16x32xi32, #gpu.address_space<workgroup>>, memref<16x32xi32, #gpu.address_space<workgroup>>, memref<16x32xi32, #gpu.address_space<workgroup>>) -> ()
  return
}

// -----

func.func @outside_a_kernel(%a: memref<16x32xi32, #gpu.address_space<private>>) {
  // expected-error @+1 {{'hw.prmt' op must be inside a kernel (a func.func with the hw.kernel attribute)}}
  "hw.prmt"(%a, %a, %a, %a) : (memref<16x32xi32, #gpu.address_space<private>>, memref<16x32xi32, #gpu.address_space<private>>, memref<16x32xi32, #gpu.address_space<private>>, memref<16x32xi32, #gpu.address_space<private>>) -> ()
  return
}
