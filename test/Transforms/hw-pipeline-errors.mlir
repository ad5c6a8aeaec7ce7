// RUN: lamina-opt %s --split-input-file --hw-pipeline --verify-diagnostics

// Loops hw-pipeline cannot pipeline are reported at their annotation or op.

func.func @dynamic_bounds(%a: memref<64x128xf32>, %n: index) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %s = "hw.alloc"() : () -> memref<64x32xf32, #gpu.address_space<workgroup>>
  scf.for %k = %c0 to %n step %c32 {
    // expected-error @+1 {{hw-pipeline needs a loop with constant bounds and no iteration arguments}}
    "hw.pipeline"() {stages = 2 : i64} : () -> ()
    %t = "hw.async_copy"(%a, %s, %c0, %k) : (memref<64x128xf32>, memref<64x32xf32, #gpu.address_space<workgroup>>, index, index) -> !hw.token
    "hw.commit"(%t) : (!hw.token) -> ()
    "hw.wait"() {pending = 0 : i64} : () -> ()
  }
  return
}

// -----

func.func @op_before_wait(%a: memref<64x128xf32>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %s = "hw.alloc"() : () -> memref<64x32xf32, #gpu.address_space<workgroup>>
  %r = "hw.alloc"() : () -> memref<64x32xf32, #gpu.address_space<private>>
  scf.for %k = %c0 to %c128 step %c32 {
    "hw.pipeline"() {stages = 2 : i64} : () -> ()
    %t = "hw.async_copy"(%a, %s, %c0, %k) : (memref<64x128xf32>, memref<64x32xf32, #gpu.address_space<workgroup>>, index, index) -> !hw.token
    "hw.commit"(%t) : (!hw.token) -> ()
    // expected-error @+1 {{hw-pipeline moves index arithmetic and the loads ahead; 'hw.fill' stands before the loop's wait}}
    "hw.fill"(%r) : (memref<64x32xf32, #gpu.address_space<private>>) -> ()
    "hw.wait"() {pending = 0 : i64} : () -> ()
  }
  return
}

// -----

func.func @pending(%a: memref<64x128xf32>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %s = "hw.alloc"() : () -> memref<64x32xf32, #gpu.address_space<workgroup>>
  scf.for %k = %c0 to %c128 step %c32 {
    "hw.pipeline"() {stages = 2 : i64} : () -> ()
    %t = "hw.async_copy"(%a, %s, %c0, %k) : (memref<64x128xf32>, memref<64x32xf32, #gpu.address_space<workgroup>>, index, index) -> !hw.token
    "hw.commit"(%t) : (!hw.token) -> ()
    // expected-error @+1 {{the wait of a loop to pipeline has pending = 0 (the pass chooses how many groups stay in flight)}}
    "hw.wait"() {pending = 1 : i64} : () -> ()
  }
  return
}

// -----

func.func @tile_used_after(%a: memref<64x128xf32>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  // expected-error @+1 {{hw-pipeline stages tiles used only by the pipelined loop}}
  %s = "hw.alloc"() : () -> memref<64x32xf32, #gpu.address_space<workgroup>>
  %r = "hw.alloc"() : () -> memref<64x32xf32, #gpu.address_space<private>>
  scf.for %k = %c0 to %c128 step %c32 {
    "hw.pipeline"() {stages = 2 : i64} : () -> ()
    %t = "hw.async_copy"(%a, %s, %c0, %k) : (memref<64x128xf32>, memref<64x32xf32, #gpu.address_space<workgroup>>, index, index) -> !hw.token
    "hw.commit"(%t) : (!hw.token) -> ()
    "hw.wait"() {pending = 0 : i64} : () -> ()
    "hw.barrier"() : () -> ()
  }
  "hw.copy"(%s, %r, %c0, %c0) : (memref<64x32xf32, #gpu.address_space<workgroup>>, memref<64x32xf32, #gpu.address_space<private>>, index, index) -> ()
  return
}
