// RUN: lamina-opt %s --split-input-file --verify-diagnostics
// RUN: lamina-opt %s --split-input-file --verify-diagnostics | lamina-opt --split-input-file | FileCheck %s --check-prefix=ROUND

// The rules of attention's hw ops (hw.contract, hw.mask, hw.alloc's warp
// grid) at the op, and their round trip.

// ROUND-LABEL: func.func @valid
// ROUND: "hw.alloc"() {warps = array<i64: 4, 1>} : () -> memref<64x1xf32, #gpu.address_space<private>>
// ROUND: "hw.contract"(%{{.+}}, %{{.+}}, %{{.+}}) {transpose_b = true} : (memref<64x32xf16, #gpu.address_space<workgroup>>, memref<64x32xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
// ROUND: "hw.mask"(%{{.+}}, %{{.+}}, %{{.+}}) {causal = true, keys = 100 : i64}
// ROUND: "hw.contract"(%{{.+}}, %{{.+}}, %{{.+}}) {unit = "fma"} : (memref<64x64xf32, #gpu.address_space<workgroup>>, memref<64x32xf32, #gpu.address_space<workgroup>>, memref<64x32xf32, #gpu.address_space<private>>) -> ()
func.func @valid(%i: index) attributes {hw.kernel} {
  %q = "hw.alloc"() : () -> memref<64x32xf16, #gpu.address_space<workgroup>>
  %k = "hw.alloc"() : () -> memref<64x32xf16, #gpu.address_space<workgroup>>
  %s = "hw.alloc"() {warps = array<i64: 4, 1>} : () -> memref<64x64xf32, #gpu.address_space<private>>
  %m = "hw.alloc"() {warps = array<i64: 4, 1>} : () -> memref<64x1xf32, #gpu.address_space<private>>
  %p = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<workgroup>>
  %v = "hw.alloc"() : () -> memref<64x32xf32, #gpu.address_space<workgroup>>
  %o = "hw.alloc"() : () -> memref<64x32xf32, #gpu.address_space<private>>
  "hw.contract"(%q, %k, %s) {transpose_b = true} : (memref<64x32xf16, #gpu.address_space<workgroup>>, memref<64x32xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  "hw.mask"(%s, %i, %i) {keys = 100 : i64, causal = true} : (memref<64x64xf32, #gpu.address_space<private>>, index, index) -> ()
  "hw.reduce_max"(%s, %m) : (memref<64x64xf32, #gpu.address_space<private>>, memref<64x1xf32, #gpu.address_space<private>>) -> ()
  "hw.contract"(%p, %v, %o) {unit = "fma"} : (memref<64x64xf32, #gpu.address_space<workgroup>>, memref<64x32xf32, #gpu.address_space<workgroup>>, memref<64x32xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

func.func @shapes() attributes {hw.kernel} {
  %q = "hw.alloc"() : () -> memref<64x32xf16, #gpu.address_space<workgroup>>
  %k = "hw.alloc"() : () -> memref<32x64xf16, #gpu.address_space<workgroup>>
  %s = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.contract' op contract shapes do not match: A 64x32, B 32x64, C 64x64 (expected A MxK, B NxK, C MxN)}}
  "hw.contract"(%q, %k, %s) {transpose_b = true} : (memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

func.func @f32_on_tensor_cores() attributes {hw.kernel} {
  %a = "hw.alloc"() : () -> memref<64x32xf32, #gpu.address_space<workgroup>>
  %b = "hw.alloc"() : () -> memref<32x64xf32, #gpu.address_space<workgroup>>
  %c = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.contract' op contract on tensor cores takes f16 or bf16 operands, not f32 (unit = "fma" multiplies f32 on CUDA cores)}}
  "hw.contract"(%a, %b, %c) : (memref<64x32xf32, #gpu.address_space<workgroup>>, memref<32x64xf32, #gpu.address_space<workgroup>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

func.func @register_a_on_cuda_cores() attributes {hw.kernel} {
  %a = "hw.alloc"() : () -> memref<64x32xf32, #gpu.address_space<private>>
  %b = "hw.alloc"() : () -> memref<32x64xf32, #gpu.address_space<workgroup>>
  %c = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.contract' op A is memref<64x32xf32, #gpu.address_space<private>> in registers; A is a shared tile, or on tensor cores a 2-d register tile}}
  "hw.contract"(%a, %b, %c) {unit = "fma"} : (memref<64x32xf32, #gpu.address_space<private>>, memref<32x64xf32, #gpu.address_space<workgroup>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

func.func @mask_vector(%i: index) attributes {hw.kernel} {
  %s = "hw.alloc"() : () -> memref<64xf32, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.mask' op masks a 2-d register tile; got memref<64xf32, #gpu.address_space<private>>}}
  "hw.mask"(%s, %i, %i) {keys = 4 : i64} : (memref<64xf32, #gpu.address_space<private>>, index, index) -> ()
  return
}

// -----

func.func @shared_warps() attributes {hw.kernel} {
  // expected-error @+1 {{'hw.alloc' op 'warps' is the grid (rows x cols of warps, each >= 1) of a register tile; got [4, 1]}}
  %s = "hw.alloc"() {warps = array<i64: 4, 1>} : () -> memref<64x64xf16, #gpu.address_space<workgroup>>
  return
}
