// RUN: lamina-opt %s --split-input-file --hw-check=chip=sm_80 --verify-diagnostics

// hw-check: a block reduction of several warps folds their totals through
// a scratch tile of one element per warp; one warp needs none.

func.func @main(%x: memref<4x256xf32>) {
  "hw.launch"(%x) {kernel = @no_scratch, grid = array<i64: 4>, block = array<i64: 128>} : (memref<4x256xf32>) -> ()
  return
}
func.func @no_scratch(%x: memref<4x256xf32>) attributes {hw.kernel} {
  %t = "hw.alloc"() : () -> memref<256xf32, #gpu.address_space<private>>
  %m = "hw.alloc"() : () -> memref<1xf32, #gpu.address_space<private>>
  %c0 = arith.constant 0 : index
  "hw.load_elements"(%x, %t, %c0) {shape = array<i64: 4, 256>, count = 256 : i64} : (memref<4x256xf32>, memref<256xf32, #gpu.address_space<private>>, index) -> ()
  // expected-error @+1 {{a block reduction in a block of 4 warps folds their totals through a shared f32 scratch tile of at least 4 elements; it has no scratch tile}}
  "hw.block_reduce"(%t, %m) {combine = "add", count = 256 : i64} : (memref<256xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

func.func @main(%x: memref<4x256xf32>) {
  "hw.launch"(%x) {kernel = @small_scratch, grid = array<i64: 4>, block = array<i64: 128>} : (memref<4x256xf32>) -> ()
  return
}
func.func @small_scratch(%x: memref<4x256xf32>) attributes {hw.kernel} {
  %s = "hw.alloc"() : () -> memref<2xf32, #gpu.address_space<workgroup>>
  %t = "hw.alloc"() : () -> memref<256xf32, #gpu.address_space<private>>
  %m = "hw.alloc"() : () -> memref<1xf32, #gpu.address_space<private>>
  // expected-error @+1 {{it has a scratch tile of 2}}
  "hw.block_reduce"(%t, %m, %s) {combine = "maximum", count = 256 : i64} : (memref<256xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>, memref<2xf32, #gpu.address_space<workgroup>>) -> ()
  return
}
