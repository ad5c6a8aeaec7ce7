// RUN: lamina-opt %s --split-input-file --hw-check-hazards --verify-diagnostics

// Each hazard kind is reported at its op; correct kernels, straight-line and
// software-pipelined (cp.async with three stages, TMA with two), pass.

!A = memref<128x128xf16>
!B = memref<128x64xf16>
!As = memref<3x64x32xf16, #gpu.address_space<workgroup>>
!Bs = memref<3x32x64xf16, #gpu.address_space<workgroup>>
!Acc = memref<64x64xf32, #gpu.address_space<private>>

// A three-stage cp.async pipeline: two tiles in flight while the third is
// multiplied; the wait in the loop completes the oldest group, and its
// barrier orders the previous iteration's reads before the next copy.
func.func @pipelined(%a: !A, %b: !B) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c32 = arith.constant 32 : index
  %as = "hw.alloc"() : () -> !As
  %bs = "hw.alloc"() : () -> !Bs
  %acc = "hw.alloc"() : () -> !Acc
  "hw.fill"(%acc) : (!Acc) -> ()
  %ta0 = "hw.async_copy"(%a, %as, %c0, %c0, %c0) : (!A, !As, index, index, index) -> !hw.token
  %tb0 = "hw.async_copy"(%b, %bs, %c0, %c0, %c0) : (!B, !Bs, index, index, index) -> !hw.token
  "hw.commit"(%ta0, %tb0) : (!hw.token, !hw.token) -> ()
  %ta1 = "hw.async_copy"(%a, %as, %c0, %c32, %c1) : (!A, !As, index, index, index) -> !hw.token
  %tb1 = "hw.async_copy"(%b, %bs, %c32, %c0, %c1) : (!B, !Bs, index, index, index) -> !hw.token
  "hw.commit"(%ta1, %tb1) : (!hw.token, !hw.token) -> ()
  scf.for %k = %c0 to %c2 step %c1 {
    "hw.wait"() {pending = 1 : i64} : () -> ()
    %next = arith.addi %k, %c2 : index
    %slot = arith.remui %next, %c3 : index
    %col = arith.muli %next, %c32 : index
    %ta = "hw.async_copy"(%a, %as, %c0, %col, %slot) : (!A, !As, index, index, index) -> !hw.token
    %tb = "hw.async_copy"(%b, %bs, %col, %c0, %slot) : (!B, !Bs, index, index, index) -> !hw.token
    "hw.commit"(%ta, %tb) : (!hw.token, !hw.token) -> ()
    %stage = arith.remui %k, %c3 : index
    "hw.mma"(%as, %bs, %acc, %stage, %stage) : (!As, !Bs, !Acc, index, index) -> ()
  }
  "hw.wait"() {pending = 1 : i64} : () -> ()
  "hw.mma"(%as, %bs, %acc, %c2, %c2) : (!As, !Bs, !Acc, index, index) -> ()
  "hw.wait"() {pending = 0 : i64} : () -> ()
  "hw.mma"(%as, %bs, %acc, %c0, %c0) : (!As, !Bs, !Acc, index, index) -> ()
  return
}

// -----

!A = memref<128x128xf16>
!B = memref<128x64xf16>
!As = memref<3x64x32xf16, #gpu.address_space<workgroup>>
!Bs = memref<3x32x64xf16, #gpu.address_space<workgroup>>
!Acc = memref<64x64xf32, #gpu.address_space<private>>

// The same pipeline waiting with pending = 2 keeps the tile it multiplies
// in flight.
func.func @wait_leaves_stage_in_flight(%a: !A, %b: !B) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c32 = arith.constant 32 : index
  %as = "hw.alloc"() : () -> !As
  %bs = "hw.alloc"() : () -> !Bs
  %acc = "hw.alloc"() : () -> !Acc
  %ta0 = "hw.async_copy"(%a, %as, %c0, %c0, %c0) : (!A, !As, index, index, index) -> !hw.token
  %tb0 = "hw.async_copy"(%b, %bs, %c0, %c0, %c0) : (!B, !Bs, index, index, index) -> !hw.token
  "hw.commit"(%ta0, %tb0) : (!hw.token, !hw.token) -> ()
  %ta1 = "hw.async_copy"(%a, %as, %c0, %c32, %c1) : (!A, !As, index, index, index) -> !hw.token
  %tb1 = "hw.async_copy"(%b, %bs, %c32, %c0, %c1) : (!B, !Bs, index, index, index) -> !hw.token
  "hw.commit"(%ta1, %tb1) : (!hw.token, !hw.token) -> ()
  scf.for %k = %c0 to %c2 step %c1 {
    // expected-error @+1 {{pending = 2 leaves the async copy ('hw.async_copy' at hw-check-hazards.mlir:68:10) in flight, and shared tile memref<3x64x32xf16, #gpu.address_space<workgroup>>[0, 0:64, 0:32] is read by 'hw.mma' at hw-check-hazards.mlir:84:5: pending = 1 completes it}}
    "hw.wait"() {pending = 2 : i64} : () -> ()
    %next = arith.addi %k, %c2 : index
    %slot = arith.remui %next, %c3 : index
    %col = arith.muli %next, %c32 : index
    %ta = "hw.async_copy"(%a, %as, %c0, %col, %slot) : (!A, !As, index, index, index) -> !hw.token
    %tb = "hw.async_copy"(%b, %bs, %col, %c0, %slot) : (!B, !Bs, index, index, index) -> !hw.token
    "hw.commit"(%ta, %tb) : (!hw.token, !hw.token) -> ()
    %stage = arith.remui %k, %c3 : index
    "hw.mma"(%as, %bs, %acc, %stage, %stage) : (!As, !Bs, !Acc, index, index) -> ()
  }
  return
}

// -----

!A = memref<128x128xf16>
!As = memref<64x32xf16, #gpu.address_space<workgroup>>
!Acc = memref<64x64xf32, #gpu.address_space<private>>

// A committed copy read with no wait at all.
func.func @missing_wait(%a: !A) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %as = "hw.alloc"() : () -> !As
  %bs = "hw.alloc"() : () -> memref<32x64xf16, #gpu.address_space<workgroup>>
  %acc = "hw.alloc"() : () -> !Acc
  %t = "hw.async_copy"(%a, %as, %c0, %c0) : (!A, !As, index, index) -> !hw.token
  "hw.commit"(%t) : (!hw.token) -> ()
  // expected-error @+1 {{reads shared tile memref<64x32xf16, #gpu.address_space<workgroup>>[0:64, 0:32] before its async copy ('hw.async_copy' at hw-check-hazards.mlir:101:8) is complete: no hw.wait after the copy's commit}}
  "hw.mma"(%as, %bs, %acc) : (!As, memref<32x64xf16, #gpu.address_space<workgroup>>, !Acc) -> ()
  return
}

// -----

// A copy that is never committed is never waited for.
func.func @never_committed(%a: memref<64x64xf32>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %s = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<workgroup>>
  %r = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  %t = "hw.async_copy"(%a, %s, %c0, %c0) : (memref<64x64xf32>, memref<64x64xf32, #gpu.address_space<workgroup>>, index, index) -> !hw.token
  "hw.wait"() {pending = 0 : i64} : () -> ()
  // expected-error @+1 {{reads shared tile memref<64x64xf32, #gpu.address_space<workgroup>>[0:64, 0:64] while its async copy ('hw.async_copy' at hw-check-hazards.mlir:115:8) is in flight: the copy was never committed (hw.commit), so no hw.wait completes it}}
  "hw.copy"(%s, %r, %c0, %c0) : (memref<64x64xf32, #gpu.address_space<workgroup>>, memref<64x64xf32, #gpu.address_space<private>>, index, index) -> ()
  return
}

// -----

// A tile written by a synchronous copy and read by another op needs a
// barrier: each thread wrote only its part.
func.func @missing_barrier_after_write(%a: memref<64x64xf32>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %s = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<workgroup>>
  %r = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  "hw.copy"(%a, %s, %c0, %c0) : (memref<64x64xf32>, memref<64x64xf32, #gpu.address_space<workgroup>>, index, index) -> ()
  // expected-error @+1 {{reads shared tile memref<64x64xf32, #gpu.address_space<workgroup>>[0:64, 0:64], written by 'hw.copy' at hw-check-hazards.mlir:130:3 with no barrier in between: other threads' parts of it may not be written yet}}
  "hw.copy"(%s, %r, %c0, %c0) : (memref<64x64xf32, #gpu.address_space<workgroup>>, memref<64x64xf32, #gpu.address_space<private>>, index, index) -> ()
  return
}

// -----

// A loop that refills a tile each iteration needs a barrier between the
// last read of one iteration and the write of the next.
func.func @missing_barrier_before_overwrite(%a: memref<256x32xf16>, %b: memref<32x64xf16>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %as = "hw.alloc"() : () -> memref<64x32xf16, #gpu.address_space<workgroup>>
  %bs = "hw.alloc"() : () -> memref<32x64xf16, #gpu.address_space<workgroup>>
  %acc = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  "hw.copy"(%b, %bs, %c0, %c0) : (memref<32x64xf16>, memref<32x64xf16, #gpu.address_space<workgroup>>, index, index) -> ()
  scf.for %i = %c0 to %c4 step %c1 {
    %row = arith.muli %i, %c64 : index
    // expected-error @+1 {{overwrites shared tile memref<64x32xf16, #gpu.address_space<workgroup>>[0:64, 0:32], which other threads may still be reading ('hw.mma' at hw-check-hazards.mlir:154:5), with no barrier in between}}
    "hw.copy"(%a, %as, %row, %c0) : (memref<256x32xf16>, memref<64x32xf16, #gpu.address_space<workgroup>>, index, index) -> ()
    "hw.barrier"() : () -> ()
    "hw.mma"(%as, %bs, %acc) : (memref<64x32xf16, #gpu.address_space<workgroup>>, memref<32x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  }
  return
}

// -----

// Refilling a tile whose async copy is still in flight.
func.func @overwrite_in_flight(%a: memref<128x32xf32>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %s = "hw.alloc"() : () -> memref<64x32xf32, #gpu.address_space<workgroup>>
  %t0 = "hw.async_copy"(%a, %s, %c0, %c0) : (memref<128x32xf32>, memref<64x32xf32, #gpu.address_space<workgroup>>, index, index) -> !hw.token
  "hw.commit"(%t0) : (!hw.token) -> ()
  // expected-error @+1 {{overwrites shared tile memref<64x32xf32, #gpu.address_space<workgroup>>[0:64, 0:32] while an asynchronous copy into it ('hw.async_copy' at hw-check-hazards.mlir:166:9) is in flight}}
  %t1 = "hw.async_copy"(%a, %s, %c64, %c0) : (memref<128x32xf32>, memref<64x32xf32, #gpu.address_space<workgroup>>, index, index) -> !hw.token
  "hw.commit"(%t1) : (!hw.token) -> ()
  "hw.wait"() {pending = 0 : i64} : () -> ()
  return
}

// -----

!A = memref<64x256xf16>
!As = memref<2x64x64xf16, #gpu.address_space<workgroup>>
!Bs = memref<64x64xf16, #gpu.address_space<workgroup>>
!Acc = memref<64x64xf32, #gpu.address_space<private>>

// A two-stage TMA pipeline: the load of tile k+1 flies while tile k is
// multiplied; each stage's mbarrier phase flips every two iterations, and
// a barrier orders the reads of a stage before its next load.
func.func @tma_pipelined(%a: !A, %b: memref<64x64xf16>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  %bar = "hw.mbarrier_init"() {count = 1 : i64, barriers = 2 : i64} : () -> !hw.mbarrier
  %as = "hw.alloc"() : () -> !As
  %bs = "hw.alloc"() : () -> !Bs
  %acc = "hw.alloc"() : () -> !Acc
  "hw.copy"(%b, %bs, %c0, %c0) : (memref<64x64xf16>, !Bs, index, index) -> ()
  "hw.barrier"() : () -> ()
  "hw.tma_load"(%a, %as, %bar, %c0, %c0, %c0, %c0) : (!A, !As, !hw.mbarrier, index, index, index, index) -> ()
  scf.for %k = %c0 to %c4 step %c1 {
    %next = arith.addi %k, %c1 : index
    %more = arith.cmpi ult, %next, %c4 : index
    scf.if %more {
      %slot = arith.remui %next, %c2 : index
      %col = arith.muli %next, %c64 : index
      "hw.tma_load"(%a, %as, %bar, %slot, %c0, %col, %slot) : (!A, !As, !hw.mbarrier, index, index, index, index) -> ()
    }
    %stage = arith.remui %k, %c2 : index
    %round = arith.divui %k, %c2 : index
    %parity = arith.remui %round, %c2 : index
    "hw.mbarrier_wait"(%bar, %stage, %parity) : (!hw.mbarrier, index, index) -> ()
    "hw.mma"(%as, %bs, %acc, %stage) : (!As, !Bs, !Acc, index) -> ()
    "hw.barrier"() : () -> ()
  }
  return
}

// -----

// A TMA load read before any mbarrier wait.
func.func @tma_not_waited(%a: memref<64x64xf16>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %bar = "hw.mbarrier_init"() : () -> !hw.mbarrier
  %s = "hw.alloc"() : () -> memref<64x64xf16, #gpu.address_space<workgroup>>
  %r = "hw.alloc"() : () -> memref<64x64xf16, #gpu.address_space<private>>
  "hw.tma_load"(%a, %s, %bar, %c0, %c0, %c0) : (memref<64x64xf16>, memref<64x64xf16, #gpu.address_space<workgroup>>, !hw.mbarrier, index, index, index) -> ()
  // expected-error @+1 {{reads shared tile memref<64x64xf16, #gpu.address_space<workgroup>>[0:64, 0:64] before its TMA load ('hw.tma_load' at hw-check-hazards.mlir:224:3) is complete: no hw.mbarrier_wait observed phase 0 (parity 0) of mbarrier #0}}
  "hw.copy"(%s, %r, %c0, %c0) : (memref<64x64xf16, #gpu.address_space<workgroup>>, memref<64x64xf16, #gpu.address_space<private>>, index, index) -> ()
  return
}

// -----

// Waiting on a phase that no arrival completes.
func.func @mbarrier_deadlock() attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %bar = "hw.mbarrier_init"() {count = 2 : i64} : () -> !hw.mbarrier
  "hw.mbarrier_arrive"(%bar, %c0) : (!hw.mbarrier, index) -> ()
  // expected-error @+1 {{waits for phase 0 (parity 0) of mbarrier #0, which nothing completes: 1 of 2 arrivals have happened and none follows (deadlock)}}
  "hw.mbarrier_wait"(%bar, %c0, %c0) : (!hw.mbarrier, index, index) -> ()
  return
}

// -----

// After one completed phase, the next wait must be on parity 1; waiting
// on parity 1 again after that deadlocks (the phase after it never comes).
func.func @mbarrier_wrong_parity(%a: memref<64x64xf16>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %bar = "hw.mbarrier_init"() : () -> !hw.mbarrier
  %s = "hw.alloc"() : () -> memref<64x64xf16, #gpu.address_space<workgroup>>
  "hw.tma_load"(%a, %s, %bar, %c0, %c0, %c0) : (memref<64x64xf16>, memref<64x64xf16, #gpu.address_space<workgroup>>, !hw.mbarrier, index, index, index) -> ()
  "hw.mbarrier_wait"(%bar, %c0, %c0) : (!hw.mbarrier, index, index) -> ()
  // expected-error @+1 {{waits for phase 1 (parity 1) of mbarrier #0, which nothing completes: 0 of 1 arrivals have happened and none follows (deadlock)}}
  "hw.mbarrier_wait"(%bar, %c0, %c1) : (!hw.mbarrier, index, index) -> ()
  return
}
