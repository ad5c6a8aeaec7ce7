// RUN: lamina-opt %s --split-input-file --verify-diagnostics

// Tiles are allocated at the top of a kernel, in shared memory or
// registers; arithmetic works on register tiles; stores go to global
// memory through an epilogue of the right type.

func.func @alloc_global() attributes {hw.kernel} {
  // expected-error @+1 {{'hw.alloc' op allocates memref<64x64xf32> in global memory; hw.alloc makes tiles in shared memory (workgroup) or registers (private)}}
  %t = "hw.alloc"() : () -> memref<64x64xf32>
  return
}

// -----

func.func @alloc_in_loop() attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %c1 step %c1 {
    // expected-error @+1 {{'hw.alloc' op must be at the top level of the kernel (not in a loop or branch)}}
    %t = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  }
  return
}

// -----

func.func @alloc_f64() attributes {hw.kernel} {
  // expected-error @+1 {{'hw.alloc' op result has element type f64; expected f32 or f16 or bf16 or i8 or i16 or i32 or i1 or i64}}
  %t = "hw.alloc"() : () -> memref<64xf64, #gpu.address_space<private>>
  return
}

// -----

func.func @fill_global(%g: memref<8xf32>) attributes {hw.kernel} {
  // expected-error @+1 {{'hw.fill' op fills memref<8xf32> in global memory; hw.fill works on shared and register tiles}}
  "hw.fill"(%g) : (memref<8xf32>) -> ()
  return
}

// -----

func.func @relu_shared() attributes {hw.kernel} {
  %s = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<workgroup>>
  %r = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.relu' op operand #0 is in workgroup memory; expected private memory (#gpu.address_space<private>)}}
  "hw.relu"(%s, %r) : (memref<64x64xf32, #gpu.address_space<workgroup>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

func.func @unary_shapes() attributes {hw.kernel} {
  %x = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  %y = "hw.alloc"() : () -> memref<64x32xf32, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.exp' op shapes differ: 64x64 vs 64x32}}
  "hw.exp"(%x, %y) : (memref<64x64xf32, #gpu.address_space<private>>, memref<64x32xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

func.func @unary_dtypes() attributes {hw.kernel} {
  %x = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  %y = "hw.alloc"() : () -> memref<64x64xf16, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.relu' op element types differ: f32 vs f16}}
  "hw.relu"(%x, %y) : (memref<64x64xf32, #gpu.address_space<private>>, memref<64x64xf16, #gpu.address_space<private>>) -> ()
  return
}

// -----

func.func @broadcast() attributes {hw.kernel} {
  %x = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  %y = "hw.alloc"() : () -> memref<32x1xf32, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.add' op 32x1 does not broadcast to 64x64}}
  "hw.add"(%x, %y, %x) : (memref<64x64xf32, #gpu.address_space<private>>, memref<32x1xf32, #gpu.address_space<private>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

func.func @reduce_shape() attributes {hw.kernel} {
  %x = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  %m = "hw.alloc"() : () -> memref<64xf32, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.reduce_max' op reduces the rows of an MxN register tile into an Mx1 one; got 64x64 into 64}}
  "hw.reduce_max"(%x, %m) : (memref<64x64xf32, #gpu.address_space<private>>, memref<64xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

func.func @store_indices(%c: memref<100x100xf32>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %acc = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.store' op hw.store expects 2 indices (one per dim of memref<100x100xf32>), got 1}}
  "hw.store"(%acc, %c, %c0) {operandSegmentSizes = array<i32: 1, 1, 0, 1>} : (memref<64x64xf32, #gpu.address_space<private>>, memref<100x100xf32>, index) -> ()
  return
}

// -----

func.func @store_segments(%c: memref<100x100xf32>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %acc = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.store' op needs 'operandSegmentSizes' (how many operands are extras and how many indices)}}
  "hw.store"(%acc, %c, %c0, %c0) : (memref<64x64xf32, #gpu.address_space<private>>, memref<100x100xf32>, index, index) -> ()
  return
}

// -----

func.func private @wrong(%acc: f32) -> f32

func.func @store_epilogue_type(%c: memref<100x100xf16>, %bias: memref<100xf16>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %acc = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.store' op epilogue @wrong has type (f32) -> (f32); expected (f32, f16) -> f16}}
  "hw.store"(%acc, %c, %bias, %c0, %c0) {epilogue = @wrong, operandSegmentSizes = array<i32: 1, 1, 1, 2>} : (memref<64x64xf32, #gpu.address_space<private>>, memref<100x100xf16>, memref<100xf16>, index, index) -> ()
  return
}

// -----

func.func @store_extra_shape(%c: memref<100x100xf16>, %bias: memref<64xf16>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %acc = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.store' op extra #0 memref<64xf16> is neither a vector of memref<100x100xf16>'s columns (100) nor of its shape (or its rank, broadcast)}}
  "hw.store"(%acc, %c, %bias, %c0, %c0) {epilogue = @e, operandSegmentSizes = array<i32: 1, 1, 1, 2>} : (memref<64x64xf32, #gpu.address_space<private>>, memref<100x100xf16>, memref<64xf16>, index, index) -> ()
  return
}

// -----

// hw.elementwise computes an elementwise nn op with a scalar form, on as
// many tiles as the op has operands, all broadcasting to out, with the
// op's attributes valid for it, giving floats.

func.func @elementwise_not_elementwise() attributes {hw.kernel} {
  %x = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.elementwise' op 'nn.matmul' is not an elementwise nn op}}
  "hw.elementwise"(%x, %x, %x) {fn = "nn.matmul"} : (memref<64x64xf32, #gpu.address_space<private>>, memref<64x64xf32, #gpu.address_space<private>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

func.func @elementwise_unknown() attributes {hw.kernel} {
  %x = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.elementwise' op 'nn.no_such_op' is not an elementwise nn op}}
  "hw.elementwise"(%x, %x) {fn = "nn.no_such_op"} : (memref<64x64xf32, #gpu.address_space<private>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

func.func @elementwise_arity() attributes {hw.kernel} {
  %x = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.elementwise' op 'nn.add' takes 2 operand(s), got 1 tile(s)}}
  "hw.elementwise"(%x, %x) {fn = "nn.add"} : (memref<64x64xf32, #gpu.address_space<private>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

func.func @elementwise_broadcast() attributes {hw.kernel} {
  %x = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  %r = "hw.alloc"() : () -> memref<1x32xf32, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.elementwise' op 1x32 does not broadcast to 64x64}}
  "hw.elementwise"(%x, %r, %x) {fn = "nn.add"} : (memref<64x64xf32, #gpu.address_space<private>>, memref<1x32xf32, #gpu.address_space<private>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

func.func @elementwise_attribute() attributes {hw.kernel} {
  %x = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.elementwise' op attribute 'approximate'}}
  "hw.elementwise"(%x, %x) {fn = "nn.gelu", approximate = "fast"} : (memref<64x64xf32, #gpu.address_space<private>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  return
}

// -----

func.func @elementwise_boolean() attributes {hw.kernel} {
  %x = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  // expected-error @+1 {{'hw.elementwise' op 'nn.compare' of f32, f32 gives i1, not f32}}
  "hw.elementwise"(%x, %x, %x) {fn = "nn.compare", predicate = "lt"} : (memref<64x64xf32, #gpu.address_space<private>>, memref<64x64xf32, #gpu.address_space<private>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  return
}
