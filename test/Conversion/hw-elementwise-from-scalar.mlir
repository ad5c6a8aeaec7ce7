// RUN: lamina-opt %s --convert-hw-to-loops | FileCheck %s --check-prefix=LOOPS
// RUN: lamina-opt %s --convert-hw-to-nvgpu=chip=sm_80 | FileCheck %s --check-prefix=GPU
// RUN: sed 's/nn.silu/nn.argmax/' %s | not lamina-opt --convert-hw-to-nvgpu=chip=sm_80 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// Elementwise register-tile ops compute from their scalar expression
// (lamina.scalar) on both sides: the CPU emulation loops over the tile,
// the GPU lowering over the 32 elements each of the 128 threads holds.
// An expression with an arith-only body (nn.silu: sigmoid as a rational
// approximation of tanh) keeps to arith ops on both; one without (exp)
// uses math.exp on both. A name that is no elementwise nn op is refused.

// LOOPS-LABEL: func.func private @kernel
// LOOPS: scf.for
// LOOPS: arith.divf
// LOOPS-NOT: math.
// LOOPS: memref.store
// LOOPS: scf.for
// LOOPS: math.exp
// LOOPS: memref.store

// GPU-LABEL: gpu.func @kernel
// GPU-COUNT-32: arith.divf
// GPU-NOT: math.tanh
// GPU-COUNT-32: math.exp
// GPU: gpu.return

// UNKNOWN: error: 'hw.elementwise' op 'nn.argmax' is not an elementwise nn op

func.func @main(%x: memref<64x64xf32>) {
  "hw.launch"(%x) {kernel = @kernel, grid = array<i64: 1>, block = array<i64: 128>} : (memref<64x64xf32>) -> ()
  return
}

func.func @kernel(%x: memref<64x64xf32>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %r = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  "hw.copy"(%x, %r, %c0, %c0) : (memref<64x64xf32>, memref<64x64xf32, #gpu.address_space<private>>, index, index) -> ()
  "hw.elementwise"(%r, %r) {fn = "nn.silu"} : (memref<64x64xf32, #gpu.address_space<private>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  "hw.exp"(%r, %r) : (memref<64x64xf32, #gpu.address_space<private>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  "hw.copy"(%r, %x, %c0, %c0) : (memref<64x64xf32, #gpu.address_space<private>>, memref<64x64xf32>, index, index) -> ()
  return
}
