// RUN: lamina-opt %s --split-input-file --verify-diagnostics

// The rules of runs of elements and block reductions, at the op.

func.func @load_2d_tile(%x: memref<4x8xf32>, %i: index) attributes {hw.kernel} {
  %t = "hw.alloc"() : () -> memref<4x8xf32, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.load_elements' op moves a 1-d register tile; got memref<4x8xf32, #gpu.address_space<private>>}}
  "hw.load_elements"(%x, %t, %i) {shape = array<i64: 4, 8>, count = 8 : i64} : (memref<4x8xf32>, memref<4x8xf32, #gpu.address_space<private>>, index) -> ()
  return
}

// -----

func.func @load_no_broadcast(%x: memref<3xf32>, %i: index) attributes {hw.kernel} {
  %t = "hw.alloc"() : () -> memref<32xf32, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.load_elements' op 3 does not broadcast to 4x8}}
  "hw.load_elements"(%x, %t, %i) {shape = array<i64: 4, 8>, count = 32 : i64} : (memref<3xf32>, memref<32xf32, #gpu.address_space<private>>, index) -> ()
  return
}

// -----

func.func @load_count(%x: memref<4x8xf32>, %i: index) attributes {hw.kernel} {
  %t = "hw.alloc"() : () -> memref<32xf32, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.load_elements' op 'count' must be in [0, 32], got 33}}
  "hw.load_elements"(%x, %t, %i) {shape = array<i64: 4, 8>, count = 33 : i64} : (memref<4x8xf32>, memref<32xf32, #gpu.address_space<private>>, index) -> ()
  return
}

// -----

func.func @store_space(%y: memref<4x8xf16>, %i: index) attributes {hw.kernel} {
  %t = "hw.alloc"() : () -> memref<32xf16, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.store_elements' op stores into memref<4x8xf16>, whose shape is not the space 32}}
  "hw.store_elements"(%t, %y, %i) {shape = array<i64: 32>, count = 32 : i64} : (memref<32xf16, #gpu.address_space<private>>, memref<4x8xf16>, index) -> ()
  return
}

// -----

func.func @reduce_into_row() attributes {hw.kernel} {
  %t = "hw.alloc"() : () -> memref<32xf32, #gpu.address_space<private>>
  %m = "hw.alloc"() : () -> memref<2xf32, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.block_reduce' op folds a 1-d register tile into a tile of one element; got memref<32xf32, #gpu.address_space<private>> into memref<2xf32, #gpu.address_space<private>>}}
  "hw.block_reduce"(%t, %m) {combine = "add", count = 32 : i64} : (memref<32xf32, #gpu.address_space<private>>, memref<2xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

func.func @reduce_combine() attributes {hw.kernel} {
  %t = "hw.alloc"() : () -> memref<32xf32, #gpu.address_space<private>>
  %m = "hw.alloc"() : () -> memref<1xf32, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.block_reduce' op attribute 'combine'}}
  "hw.block_reduce"(%t, %m) {combine = "sub", count = 32 : i64} : (memref<32xf32, #gpu.address_space<private>>, memref<1xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

func.func @select_condition() attributes {hw.kernel} {
  %x = "hw.alloc"() : () -> memref<32xf32, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.elementwise' op operand 'cond' of 'nn.select' is f32; it takes i1}}
  "hw.elementwise"(%x, %x, %x, %x) {fn = "nn.select"} : (memref<32xf32, #gpu.address_space<private>>, memref<32xf32, #gpu.address_space<private>>, memref<32xf32, #gpu.address_space<private>>, memref<32xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

func.func @walk_order(%x: memref<4x8xf32>, %i: index) attributes {hw.kernel} {
  %t = "hw.alloc"() : () -> memref<32xf32, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.load_elements' op 'order' must be a permutation of the 2 dims of the space, got [1, 1]}}
  "hw.load_elements"(%x, %t, %i) {shape = array<i64: 4, 8>, count = 32 : i64, order = array<i64: 1, 1>} : (memref<4x8xf32>, memref<32xf32, #gpu.address_space<private>>, index) -> ()
  return
}
