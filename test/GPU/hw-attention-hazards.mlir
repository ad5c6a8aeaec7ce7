// RUN: lamina-opt %s --split-input-file --hw-check-hazards --verify-diagnostics

// hw-check-hazards on the loop of a flash-attention kernel: hw.contract
// reads its shared operands (K as stored, for the scores; V, with P from
// registers). The loop as convert-nn-to-hw writes it passes; without the
// barrier that ends an iteration, the next one's V copy overwrites a tile
// P V may still be reading (K's is safe: the wait before P V is a
// barrier); waiting with pending = 1 before P V
// leaves V's copy in flight. The sm_90a loop, a ring of two K and V
// stages that TMA fills on one mbarrier each (five key steps: the ring
// wraps twice), passes; waiting on parity 0 at every step waits for a
// phase nothing completes, and without the barrier that ends an
// iteration the next step's loads overwrite a stage its wgmmas may still
// be reading.

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

// -----

!G = memref<300x64xf16>
!Q = memref<64x64xf16, #gpu.address_space<workgroup>>
!R = memref<2x64x64xf16, #gpu.address_space<workgroup>>
!S = memref<64x64xf32, #gpu.address_space<private>>
!P = memref<64x64xf16, #gpu.address_space<private>>

func.func @main(%q: !G, %k: !G, %v: !G, %o: !G) {
  "hw.launch"(%q, %k, %v, %o) {kernel = @tma_ring, grid = array<i64: 5, 1>, block = array<i64: 128>} : (!G, !G, !G, !G) -> ()
  return
}
func.func @tma_ring(%q: !G, %k: !G, %v: !G, %o: !G) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c5 = arith.constant 5 : index
  %c64 = arith.constant 64 : index
  %qbar = "hw.mbarrier_init"() : () -> !hw.mbarrier
  %bar = "hw.mbarrier_init"() {count = 2 : i64, barriers = 2 : i64} : () -> !hw.mbarrier
  %qs = "hw.alloc"() : () -> !Q
  %ks = "hw.alloc"() : () -> !R
  %vs = "hw.alloc"() : () -> !R
  %s = "hw.alloc"() {warps = array<i64: 4, 1>} : () -> !S
  %p = "hw.alloc"() {warps = array<i64: 4, 1>} : () -> !P
  %acc = "hw.alloc"() {warps = array<i64: 4, 1>} : () -> !S
  "hw.fill"(%acc) : (!S) -> ()
  %bx = "hw.block_id"() : () -> index
  %row = arith.muli %bx, %c64 : index
  "hw.tma_load"(%q, %qs, %qbar, %c0, %row, %c0) : (!G, !Q, !hw.mbarrier, index, index, index) -> ()
  "hw.tma_load"(%k, %ks, %bar, %c0, %c0, %c0, %c0) : (!G, !R, !hw.mbarrier, index, index, index, index) -> ()
  "hw.tma_load"(%v, %vs, %bar, %c0, %c0, %c0, %c0) : (!G, !R, !hw.mbarrier, index, index, index, index) -> ()
  "hw.mbarrier_wait"(%qbar, %c0, %c0) : (!hw.mbarrier, index, index) -> ()
  scf.for %j = %c0 to %c5 step %c1 {
    %next = arith.addi %j, %c1 : index
    %more = arith.cmpi ult, %next, %c5 : index
    scf.if %more {
      %at = arith.remui %next, %c2 : index
      %kv = arith.muli %next, %c64 : index
      "hw.tma_load"(%k, %ks, %bar, %at, %kv, %c0, %at) : (!G, !R, !hw.mbarrier, index, index, index, index) -> ()
      "hw.tma_load"(%v, %vs, %bar, %at, %kv, %c0, %at) : (!G, !R, !hw.mbarrier, index, index, index, index) -> ()
    }
    %slot = arith.remui %j, %c2 : index
    %round = arith.divui %j, %c2 : index
    %parity = arith.remui %round, %c2 : index
    "hw.mbarrier_wait"(%bar, %slot, %parity) : (!hw.mbarrier, index, index) -> ()
    "hw.fill"(%s) : (!S) -> ()
    "hw.contract"(%qs, %ks, %s, %slot) {transpose_b = true} : (!Q, !R, !S, index) -> ()
    "hw.cast"(%s, %p) : (!S, !P) -> ()
    "hw.contract"(%p, %vs, %acc, %slot) : (!P, !R, !S, index) -> ()
    "hw.barrier"() : () -> ()
  }
  "hw.store"(%acc, %o, %row, %c0) {operandSegmentSizes = array<i32: 1, 1, 0, 2>} : (!S, !G, index, index) -> ()
  return
}

// -----

!G = memref<300x64xf16>
!Q = memref<64x64xf16, #gpu.address_space<workgroup>>
!R = memref<2x64x64xf16, #gpu.address_space<workgroup>>
!S = memref<64x64xf32, #gpu.address_space<private>>
!P = memref<64x64xf16, #gpu.address_space<private>>

func.func @main(%q: !G, %k: !G, %v: !G, %o: !G) {
  "hw.launch"(%q, %k, %v, %o) {kernel = @tma_ring_one_parity, grid = array<i64: 5, 1>, block = array<i64: 128>} : (!G, !G, !G, !G) -> ()
  return
}
func.func @tma_ring_one_parity(%q: !G, %k: !G, %v: !G, %o: !G) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c5 = arith.constant 5 : index
  %c64 = arith.constant 64 : index
  %qbar = "hw.mbarrier_init"() : () -> !hw.mbarrier
  %bar = "hw.mbarrier_init"() {count = 2 : i64, barriers = 2 : i64} : () -> !hw.mbarrier
  %qs = "hw.alloc"() : () -> !Q
  %ks = "hw.alloc"() : () -> !R
  %vs = "hw.alloc"() : () -> !R
  %s = "hw.alloc"() {warps = array<i64: 4, 1>} : () -> !S
  %p = "hw.alloc"() {warps = array<i64: 4, 1>} : () -> !P
  %acc = "hw.alloc"() {warps = array<i64: 4, 1>} : () -> !S
  "hw.fill"(%acc) : (!S) -> ()
  %bx = "hw.block_id"() : () -> index
  %row = arith.muli %bx, %c64 : index
  "hw.tma_load"(%q, %qs, %qbar, %c0, %row, %c0) : (!G, !Q, !hw.mbarrier, index, index, index) -> ()
  "hw.tma_load"(%k, %ks, %bar, %c0, %c0, %c0, %c0) : (!G, !R, !hw.mbarrier, index, index, index, index) -> ()
  "hw.tma_load"(%v, %vs, %bar, %c0, %c0, %c0, %c0) : (!G, !R, !hw.mbarrier, index, index, index, index) -> ()
  "hw.mbarrier_wait"(%qbar, %c0, %c0) : (!hw.mbarrier, index, index) -> ()
  scf.for %j = %c0 to %c5 step %c1 {
    %next = arith.addi %j, %c1 : index
    %more = arith.cmpi ult, %next, %c5 : index
    scf.if %more {
      %at = arith.remui %next, %c2 : index
      %kv = arith.muli %next, %c64 : index
      "hw.tma_load"(%k, %ks, %bar, %at, %kv, %c0, %at) : (!G, !R, !hw.mbarrier, index, index, index, index) -> ()
      "hw.tma_load"(%v, %vs, %bar, %at, %kv, %c0, %at) : (!G, !R, !hw.mbarrier, index, index, index, index) -> ()
    }
    %slot = arith.remui %j, %c2 : index
    %round = arith.divui %j, %c2 : index
    %parity = arith.remui %round, %c2 : index
    // expected-error @+1 {{waits for phase 2 (parity 0) of mbarrier #0, which nothing completes}}
    "hw.mbarrier_wait"(%bar, %slot, %c0) : (!hw.mbarrier, index, index) -> ()
    "hw.fill"(%s) : (!S) -> ()
    "hw.contract"(%qs, %ks, %s, %slot) {transpose_b = true} : (!Q, !R, !S, index) -> ()
    "hw.cast"(%s, %p) : (!S, !P) -> ()
    "hw.contract"(%p, %vs, %acc, %slot) : (!P, !R, !S, index) -> ()
    "hw.barrier"() : () -> ()
  }
  "hw.store"(%acc, %o, %row, %c0) {operandSegmentSizes = array<i32: 1, 1, 0, 2>} : (!S, !G, index, index) -> ()
  return
}

// -----

!G = memref<300x64xf16>
!Q = memref<64x64xf16, #gpu.address_space<workgroup>>
!R = memref<2x64x64xf16, #gpu.address_space<workgroup>>
!S = memref<64x64xf32, #gpu.address_space<private>>
!P = memref<64x64xf16, #gpu.address_space<private>>

func.func @main(%q: !G, %k: !G, %v: !G, %o: !G) {
  "hw.launch"(%q, %k, %v, %o) {kernel = @tma_ring_no_barrier, grid = array<i64: 5, 1>, block = array<i64: 128>} : (!G, !G, !G, !G) -> ()
  return
}
func.func @tma_ring_no_barrier(%q: !G, %k: !G, %v: !G, %o: !G) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c5 = arith.constant 5 : index
  %c64 = arith.constant 64 : index
  %qbar = "hw.mbarrier_init"() : () -> !hw.mbarrier
  %bar = "hw.mbarrier_init"() {count = 2 : i64, barriers = 2 : i64} : () -> !hw.mbarrier
  %qs = "hw.alloc"() : () -> !Q
  %ks = "hw.alloc"() : () -> !R
  %vs = "hw.alloc"() : () -> !R
  %s = "hw.alloc"() {warps = array<i64: 4, 1>} : () -> !S
  %p = "hw.alloc"() {warps = array<i64: 4, 1>} : () -> !P
  %acc = "hw.alloc"() {warps = array<i64: 4, 1>} : () -> !S
  "hw.fill"(%acc) : (!S) -> ()
  %bx = "hw.block_id"() : () -> index
  %row = arith.muli %bx, %c64 : index
  "hw.tma_load"(%q, %qs, %qbar, %c0, %row, %c0) : (!G, !Q, !hw.mbarrier, index, index, index) -> ()
  "hw.tma_load"(%k, %ks, %bar, %c0, %c0, %c0, %c0) : (!G, !R, !hw.mbarrier, index, index, index, index) -> ()
  "hw.tma_load"(%v, %vs, %bar, %c0, %c0, %c0, %c0) : (!G, !R, !hw.mbarrier, index, index, index, index) -> ()
  "hw.mbarrier_wait"(%qbar, %c0, %c0) : (!hw.mbarrier, index, index) -> ()
  scf.for %j = %c0 to %c5 step %c1 {
    %next = arith.addi %j, %c1 : index
    %more = arith.cmpi ult, %next, %c5 : index
    scf.if %more {
      %at = arith.remui %next, %c2 : index
      %kv = arith.muli %next, %c64 : index
      // expected-error @+1 {{overwrites shared tile memref<2x64x64xf16, #gpu.address_space<workgroup>>[0, 0:64, 0:64], which other threads may still be reading ('hw.contract'}}
      "hw.tma_load"(%k, %ks, %bar, %at, %kv, %c0, %at) : (!G, !R, !hw.mbarrier, index, index, index, index) -> ()
      // expected-error @+1 {{overwrites shared tile memref<2x64x64xf16, #gpu.address_space<workgroup>>[0, 0:64, 0:64], which other threads may still be reading ('hw.contract'}}
      "hw.tma_load"(%v, %vs, %bar, %at, %kv, %c0, %at) : (!G, !R, !hw.mbarrier, index, index, index, index) -> ()
    }
    %slot = arith.remui %j, %c2 : index
    %round = arith.divui %j, %c2 : index
    %parity = arith.remui %round, %c2 : index
    "hw.mbarrier_wait"(%bar, %slot, %parity) : (!hw.mbarrier, index, index) -> ()
    "hw.fill"(%s) : (!S) -> ()
    "hw.contract"(%qs, %ks, %s, %slot) {transpose_b = true} : (!Q, !R, !S, index) -> ()
    "hw.cast"(%s, %p) : (!S, !P) -> ()
    "hw.contract"(%p, %vs, %acc, %slot) : (!P, !R, !S, index) -> ()
  }
  "hw.store"(%acc, %o, %row, %c0) {operandSegmentSizes = array<i32: 1, 1, 0, 2>} : (!S, !G, index, index) -> ()
  return
}
