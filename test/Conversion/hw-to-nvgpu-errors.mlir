// RUN: lamina-opt %s --split-input-file --convert-hw-to-nvgpu=chip=sm_80 --verify-diagnostics

// What the GPU lowering does not distribute is reported at the op (the CPU
// emulation runs these kernels).

func.func @main(%a: memref<64x64xf32>) {
  "hw.launch"(%a) {kernel = @reduce, grid = array<i64: 1>, block = array<i64: 128>} : (memref<64x64xf32>) -> ()
  return
}
func.func @reduce(%a: memref<64x64xf32>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %x = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  %m = "hw.alloc"() : () -> memref<64x1xf32, #gpu.address_space<private>>
  "hw.copy"(%a, %x, %c0, %c0) : (memref<64x64xf32>, memref<64x64xf32, #gpu.address_space<private>>, index, index) -> ()
  // expected-error @+1 {{'hw.reduce_sum' is lowered to the GPU for accumulator tiles whose warps hold whole rows into their row statistics (hw.alloc with warps = [W, 1] for both)}}
  "hw.reduce_sum"(%x, %m) : (memref<64x64xf32, #gpu.address_space<private>>, memref<64x1xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

func.func @main(%a: memref<64x64xf32>) {
  "hw.launch"(%a) {kernel = @broadcast, grid = array<i64: 1>, block = array<i64: 128>} : (memref<64x64xf32>) -> ()
  return
}
func.func @broadcast(%a: memref<64x64xf32>) attributes {hw.kernel} {
  %x = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  %r = "hw.alloc"() : () -> memref<1x64xf32, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.add' on register tiles of different shapes (memref<1x64xf32, #gpu.address_space<private>> into memref<64x64xf32, #gpu.address_space<private>>) is not lowered to the GPU: broadcasting operands are held by other threads (load them broadcast into the result's shape: hw.load_elements)}}
  "hw.add"(%x, %r, %x) : (memref<64x64xf32, #gpu.address_space<private>>, memref<1x64xf32, #gpu.address_space<private>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

func.func @main(%a: memref<64x64xf32>) {
  "hw.launch"(%a) {kernel = @small, grid = array<i64: 1>, block = array<i64: 128>} : (memref<64x64xf32>) -> ()
  return
}
func.func @small(%a: memref<64x64xf32>) attributes {hw.kernel} {
  %as = "hw.alloc"() : () -> memref<16x8xf16, #gpu.address_space<workgroup>>
  %bs = "hw.alloc"() : () -> memref<8x8xf16, #gpu.address_space<workgroup>>
  %acc = "hw.alloc"() : () -> memref<16x8xf32, #gpu.address_space<private>>
  // expected-error @+1 {{the accumulator memref<16x8xf32, #gpu.address_space<private>> of hw.mma is not divided into 16x8 fragments by the 4 warps of the block (hw-check reports this)}}
  "hw.mma"(%as, %bs, %acc) : (memref<16x8xf16, #gpu.address_space<workgroup>>, memref<8x8xf16, #gpu.address_space<workgroup>>, memref<16x8xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

// expected-error @+1 {{kernel @k needs one block size to be compiled for the GPU; its launches use 2}}
func.func @k(%a: memref<64xf32>) attributes {hw.kernel} {
  return
}
func.func @main(%a: memref<64xf32>) {
  "hw.launch"(%a) {kernel = @k, grid = array<i64: 1>, block = array<i64: 32>} : (memref<64xf32>) -> ()
  "hw.launch"(%a) {kernel = @k, grid = array<i64: 1>, block = array<i64: 64>} : (memref<64xf32>) -> ()
  return
}

// -----

func.func @main(%a: memref<64x64xf16>) {
  "hw.launch"(%a) {kernel = @tma, grid = array<i64: 1>, block = array<i64: 128>} : (memref<64x64xf16>) -> ()
  return
}
func.func @tma(%a: memref<64x64xf16>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'hw.mbarrier_init' needs TMA and mbarriers: sm_90a, not sm_80}}
  %bar = "hw.mbarrier_init"() : () -> !hw.mbarrier
  %s = "hw.alloc"() : () -> memref<64x64xf16, #gpu.address_space<workgroup>>
  "hw.tma_load"(%a, %s, %bar, %c0, %c0, %c0) : (memref<64x64xf16>, memref<64x64xf16, #gpu.address_space<workgroup>>, !hw.mbarrier, index, index, index) -> ()
  return
}

// -----

// A register A of hw.contract whose warps (a 2x2 grid) do not hold the
// accumulator's rows (its warps stacked 4x1).

func.func @main(%k: memref<64x64xf16>) {
  "hw.launch"(%k) {kernel = @register_a, grid = array<i64: 1>, block = array<i64: 128>} : (memref<64x64xf16>) -> ()
  return
}
func.func @register_a(%k: memref<64x64xf16>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %p = "hw.alloc"() : () -> memref<64x64xf16, #gpu.address_space<private>>
  %v = "hw.alloc"() : () -> memref<64x64xf16, #gpu.address_space<workgroup>>
  %o = "hw.alloc"() {warps = array<i64: 4, 1>} : () -> memref<64x64xf32, #gpu.address_space<private>>
  "hw.copy"(%k, %v, %c0, %c0) : (memref<64x64xf16>, memref<64x64xf16, #gpu.address_space<workgroup>>, index, index) -> ()
  "hw.barrier"() : () -> ()
  // expected-error @+1 {{A memref<64x64xf16, #gpu.address_space<private>> of hw.contract is a register tile whose warps do not hold the accumulator's rows (hw.alloc both with warps = [W, 1])}}
  "hw.contract"(%p, %v, %o) : (memref<64x64xf16, #gpu.address_space<private>>, memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  return
}
