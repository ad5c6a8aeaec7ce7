// RUN: lamina-opt %s --split-input-file --verify-diagnostics

// The data-movement ops: gathers from global or shared memory through an
// index map of the source's rank, coordinates along a dim of the space,
// folds along a dim of the source, stores into a box of as many dims as
// the memref.

func.func @gather_from_registers(%t: memref<256xf32, #gpu.address_space<private>>, %o: index) attributes {hw.kernel} {
  // expected-error @+1 {{'hw.gather_elements' op reads memref<256xf32, #gpu.address_space<private>> in registers; it gathers from global or shared memory}}
  "hw.gather_elements"(%t, %t, %o) {shape = array<i64: 256>, count = 256 : i64, dims = array<i64: 0>} : (memref<256xf32, #gpu.address_space<private>>, memref<256xf32, #gpu.address_space<private>>, index) -> ()
  return
}

// -----

func.func @gather_map_rank(%x: memref<4x8xf32>, %t: memref<256xf32, #gpu.address_space<private>>, %o: index) attributes {hw.kernel} {
  // expected-error @+1 {{'hw.gather_elements' op 'dims' must have 2 elements (one per dim of memref<4x8xf32>), got 1}}
  "hw.gather_elements"(%x, %t, %o) {shape = array<i64: 32>, count = 32 : i64, dims = array<i64: 0>} : (memref<4x8xf32>, memref<256xf32, #gpu.address_space<private>>, index) -> ()
  return
}

// -----

func.func @gather_dim_outside_space(%x: memref<4x8xf32>, %t: memref<256xf32, #gpu.address_space<private>>, %o: index) attributes {hw.kernel} {
  // expected-error @+1 {{'hw.gather_elements' op 'dims' maps source dim 1 to dim 2 of a space of rank 2}}
  "hw.gather_elements"(%x, %t, %o) {shape = array<i64: 8, 4>, count = 32 : i64, dims = array<i64: 1, 2>} : (memref<4x8xf32>, memref<256xf32, #gpu.address_space<private>>, index) -> ()
  return
}

// -----

func.func @gather_types(%x: memref<4x8xf16>, %t: memref<256xf32, #gpu.address_space<private>>, %o: index) attributes {hw.kernel} {
  // expected-error @+1 {{'hw.gather_elements' op element types differ}}
  "hw.gather_elements"(%x, %t, %o) {shape = array<i64: 8, 4>, count = 32 : i64, dims = array<i64: 1, 0>} : (memref<4x8xf16>, memref<256xf32, #gpu.address_space<private>>, index) -> ()
  return
}

// -----

func.func @index_axis(%t: memref<256xi64, #gpu.address_space<private>>, %o: index) attributes {hw.kernel} {
  // expected-error @+1 {{'hw.index_elements' op 'axis' 2 is not a dim of the space 4x8}}
  "hw.index_elements"(%t, %o) {shape = array<i64: 4, 8>, count = 32 : i64, axis = 2 : i64} : (memref<256xi64, #gpu.address_space<private>>, index) -> ()
  return
}

// -----

func.func @argmax_of_floats(%x: memref<4x8xf32>, %t: memref<256xf32, #gpu.address_space<private>>, %o: index) attributes {hw.kernel} {
  // expected-error @+1 {{'hw.fold_axis' op argmax gives indices: its tile is of i32 or i64, not f32}}
  "hw.fold_axis"(%x, %t, %o) {shape = array<i64: 4>, count = 4 : i64, axis = 1 : i64, kind = "argmax"} : (memref<4x8xf32>, memref<256xf32, #gpu.address_space<private>>, index) -> ()
  return
}

// -----

func.func @prefix_sum_space(%x: memref<4x8xf32>, %t: memref<256xf32, #gpu.address_space<private>>, %o: index) attributes {hw.kernel} {
  // expected-error @+1 {{'hw.fold_axis' op the space 4 is not that of a prefix_sum of memref<4x8xf32> along dim 1}}
  "hw.fold_axis"(%x, %t, %o) {shape = array<i64: 4>, count = 4 : i64, axis = 1 : i64, kind = "prefix_sum"} : (memref<4x8xf32>, memref<256xf32, #gpu.address_space<private>>, index) -> ()
  return
}

// -----

func.func @store_box_origin(%t: memref<1024xf32, #gpu.address_space<private>>, %y: memref<70x40xf32>, %o: index) attributes {hw.kernel} {
  // expected-error @+1 {{'hw.store_elements' op a box of memref<70x40xf32> has 2 dims and an origin of as many indices; got a 32x32 box at 1 indices}}
  "hw.store_elements"(%t, %y, %o, %o) {shape = array<i64: 32, 32>, count = 1024 : i64} : (memref<1024xf32, #gpu.address_space<private>>, memref<70x40xf32>, index, index) -> ()
  return
}
