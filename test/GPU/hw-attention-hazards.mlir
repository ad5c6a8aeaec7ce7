// RUN: lamina-opt %s --split-input-file --hw-check-hazards --verify-diagnostics

// hw-check-hazards on the loop of a flash-attention kernel: hw.contract
// reads its shared operands (K as stored, for the scores; V, with P from
// registers). The loop as convert-nn-to-hw writes it passes; without the
// barrier that ends an iteration, the next one's V copy overwrites a tile
// P V may still be reading (K's is safe: the wait before P V is a
// barrier); waiting with pending = 1 before P V
// leaves V's copy in flight.

!G = memref<100x32xf16>
!T = memref<64x32xf16, #gpu.address_space<workgroup>>
!S = memref<64x64xf32, #gpu.address_space<private>>
!P = memref<64x64xf16, #gpu.address_space<private>>
!O = memref<64x32xf32, #gpu.address_space<private>>

func.func @main(%q: !G, %k: !G, %v: !G, %o: !G) {
  "hw.launch"(%q, %k, %v, %o) {kernel = @attention, grid = array<i64: 2, 1>, block = array<i64: 128>} : (!G, !G, !G, !G) -> ()
  return
}
func.func @attention(%q: !G, %k: !G, %v: !G, %o: !G) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %qs = "hw.alloc"() : () -> !T
  %ks = "hw.alloc"() : () -> !T
  %vs = "hw.alloc"() : () -> !T
  %s = "hw.alloc"() {warps = array<i64: 4, 1>} : () -> !S
  %p = "hw.alloc"() {warps = array<i64: 4, 1>} : () -> !P
  %acc = "hw.alloc"() {warps = array<i64: 4, 1>} : () -> !O
  "hw.fill"(%acc) : (!O) -> ()
  %bx = "hw.block_id"() : () -> index
  %row = arith.muli %bx, %c64 : index
  %tq = "hw.async_copy"(%q, %qs, %row, %c0) : (!G, !T, index, index) -> !hw.token
  "hw.commit"(%tq) : (!hw.token) -> ()
  scf.for %kv = %c0 to %c128 step %c64 {
    %tk = "hw.async_copy"(%k, %ks, %kv, %c0) : (!G, !T, index, index) -> !hw.token
    "hw.commit"(%tk) : (!hw.token) -> ()
    %tv = "hw.async_copy"(%v, %vs, %kv, %c0) : (!G, !T, index, index) -> !hw.token
    "hw.commit"(%tv) : (!hw.token) -> ()
    "hw.wait"() {pending = 1 : i64} : () -> ()
    "hw.fill"(%s) : (!S) -> ()
    "hw.contract"(%qs, %ks, %s) {transpose_b = true} : (!T, !T, !S) -> ()
    "hw.mask"(%s, %row, %kv) {keys = 100 : i64, causal = true} : (!S, index, index) -> ()
    "hw.cast"(%s, %p) : (!S, !P) -> ()
    "hw.wait"() : () -> ()
    "hw.contract"(%p, %vs, %acc) : (!P, !T, !O) -> ()
    "hw.barrier"() : () -> ()
  }
  "hw.store"(%acc, %o, %row, %c0) {operandSegmentSizes = array<i32: 1, 1, 0, 2>} : (!O, !G, index, index) -> ()
  return
}

// -----

!G = memref<100x32xf16>
!T = memref<64x32xf16, #gpu.address_space<workgroup>>
!S = memref<64x64xf32, #gpu.address_space<private>>
!P = memref<64x64xf16, #gpu.address_space<private>>
!O = memref<64x32xf32, #gpu.address_space<private>>

func.func @main(%q: !G, %k: !G, %v: !G) {
  "hw.launch"(%q, %k, %v) {kernel = @no_barrier, grid = array<i64: 2, 1>, block = array<i64: 128>} : (!G, !G, !G) -> ()
  return
}
func.func @no_barrier(%q: !G, %k: !G, %v: !G) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %qs = "hw.alloc"() : () -> !T
  %ks = "hw.alloc"() : () -> !T
  %vs = "hw.alloc"() : () -> !T
  %s = "hw.alloc"() {warps = array<i64: 4, 1>} : () -> !S
  %p = "hw.alloc"() {warps = array<i64: 4, 1>} : () -> !P
  %acc = "hw.alloc"() {warps = array<i64: 4, 1>} : () -> !O
  %tq = "hw.async_copy"(%q, %qs, %c0, %c0) : (!G, !T, index, index) -> !hw.token
  "hw.commit"(%tq) : (!hw.token) -> ()
  scf.for %kv = %c0 to %c128 step %c64 {
    %tk = "hw.async_copy"(%k, %ks, %kv, %c0) : (!G, !T, index, index) -> !hw.token
    "hw.commit"(%tk) : (!hw.token) -> ()
    // expected-error @+1 {{overwrites shared tile memref<64x32xf16, #gpu.address_space<workgroup>>[0:64, 0:32], which other threads may still be reading ('hw.contract' at}}
    %tv = "hw.async_copy"(%v, %vs, %kv, %c0) : (!G, !T, index, index) -> !hw.token
    "hw.commit"(%tv) : (!hw.token) -> ()
    "hw.wait"() {pending = 1 : i64} : () -> ()
    "hw.contract"(%qs, %ks, %s) {transpose_b = true} : (!T, !T, !S) -> ()
    "hw.cast"(%s, %p) : (!S, !P) -> ()
    "hw.wait"() : () -> ()
    "hw.contract"(%p, %vs, %acc) : (!P, !T, !O) -> ()
  }
  return
}

// -----

!G = memref<100x32xf16>
!T = memref<64x32xf16, #gpu.address_space<workgroup>>
!S = memref<64x64xf32, #gpu.address_space<private>>
!P = memref<64x64xf16, #gpu.address_space<private>>
!O = memref<64x32xf32, #gpu.address_space<private>>

func.func @main(%q: !G, %k: !G, %v: !G) {
  "hw.launch"(%q, %k, %v) {kernel = @value_in_flight, grid = array<i64: 2, 1>, block = array<i64: 128>} : (!G, !G, !G) -> ()
  return
}
func.func @value_in_flight(%q: !G, %k: !G, %v: !G) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %qs = "hw.alloc"() : () -> !T
  %ks = "hw.alloc"() : () -> !T
  %vs = "hw.alloc"() : () -> !T
  %s = "hw.alloc"() {warps = array<i64: 4, 1>} : () -> !S
  %p = "hw.alloc"() {warps = array<i64: 4, 1>} : () -> !P
  %acc = "hw.alloc"() {warps = array<i64: 4, 1>} : () -> !O
  %tq = "hw.async_copy"(%q, %qs, %c0, %c0) : (!G, !T, index, index) -> !hw.token
  "hw.commit"(%tq) : (!hw.token) -> ()
  %tk = "hw.async_copy"(%k, %ks, %c0, %c0) : (!G, !T, index, index) -> !hw.token
  "hw.commit"(%tk) : (!hw.token) -> ()
  %tv = "hw.async_copy"(%v, %vs, %c0, %c0) : (!G, !T, index, index) -> !hw.token
  "hw.commit"(%tv) : (!hw.token) -> ()
  "hw.wait"() {pending = 1 : i64} : () -> ()
  "hw.contract"(%qs, %ks, %s) {transpose_b = true} : (!T, !T, !S) -> ()
  "hw.cast"(%s, %p) : (!S, !P) -> ()
  // expected-error @+1 {{pending = 1 leaves the async copy}}
  "hw.wait"() {pending = 1 : i64} : () -> ()
  "hw.contract"(%p, %vs, %acc) : (!P, !T, !O) -> ()
  return
}
