// RUN: lamina-opt %s --split-input-file --hw-pipeline | FileCheck %s
// RUN: lamina-opt %s --split-input-file --hw-pipeline --hw-check-hazards > /dev/null

// A loop written as load-wait-use becomes a prologue, a steady state that
// loads stages-1 iterations ahead into a multi-buffered tile, and an
// unrolled tail; the result has no hazards.

// CHECK-LABEL: func.func @async
// CHECK: %[[AS:.+]] = "hw.alloc"() : () -> memref<3x64x32xf16, #gpu.address_space<workgroup>>
// CHECK: %[[BS:.+]] = "hw.alloc"() : () -> memref<3x32x64xf16, #gpu.address_space<workgroup>>
// CHECK-NOT: "hw.alloc"() : () -> memref<64x32xf16
// Prologue: iterations 0 and 1.
// CHECK: "hw.async_copy"(%{{.+}}, %[[AS]], %{{.+}}, %{{.+}}, %{{.+}})
// CHECK: "hw.commit"
// CHECK: "hw.async_copy"(%{{.+}}, %[[AS]]
// CHECK: "hw.commit"
// Steady state: 4 - 2 = 2 iterations, each loading iteration k + 2.
// CHECK: scf.for %[[K:.+]] = %{{.+}} to %{{.+}} step
// CHECK: %[[AHEAD:.+]] = arith.addi %[[K]], %{{.+}} : index
// CHECK: "hw.async_copy"(%{{.+}}, %[[AS]], %{{.+}}, %[[AHEAD]], %{{.+}})
// CHECK: "hw.commit"
// CHECK: "hw.wait"() {pending = 2 : i64}
// CHECK: "hw.mma"(%[[AS]], %[[BS]], %{{.+}}, %[[S:[^,]+]], %[[S]])
// CHECK: "hw.barrier"
// CHECK: }
// Tail: the last two iterations, waiting for fewer groups.
// CHECK: "hw.wait"() {pending = 1 : i64}
// CHECK: "hw.mma"
// CHECK: "hw.wait"() : () -> ()
// CHECK: "hw.mma"
// CHECK-NOT: hw.pipeline
!A = memref<64x128xf16>
!B = memref<128x64xf16>
!As = memref<64x32xf16, #gpu.address_space<workgroup>>
!Bs = memref<32x64xf16, #gpu.address_space<workgroup>>
!Acc = memref<64x64xf32, #gpu.address_space<private>>
func.func @async(%a: !A, %b: !B) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %as = "hw.alloc"() : () -> !As
  %bs = "hw.alloc"() : () -> !Bs
  %acc = "hw.alloc"() : () -> !Acc
  scf.for %k = %c0 to %c128 step %c32 {
    "hw.pipeline"() {stages = 3 : i64} : () -> ()
    %ta = "hw.async_copy"(%a, %as, %c0, %k) : (!A, !As, index, index) -> !hw.token
    %tb = "hw.async_copy"(%b, %bs, %k, %c0) : (!B, !Bs, index, index) -> !hw.token
    "hw.commit"(%ta, %tb) : (!hw.token, !hw.token) -> ()
    "hw.wait"() {pending = 0 : i64} : () -> ()
    "hw.mma"(%as, %bs, %acc) : (!As, !Bs, !Acc) -> ()
    "hw.barrier"() : () -> ()
  }
  return
}

// -----

// TMA loads: each stage gets its own mbarrier, waited for at the parity of
// its round.
// CHECK-LABEL: func.func @tma
// CHECK: %[[BAR:.+]] = "hw.mbarrier_init"() {barriers = 2 : i64, count = 2 : i64} : () -> !hw.mbarrier
// CHECK: %[[AS:.+]] = "hw.alloc"() : () -> memref<2x64x64xf16, #gpu.address_space<workgroup>>
// CHECK: "hw.tma_load"(%{{.+}}, %[[AS]], %[[BAR]], %[[S0:[^,]+]], %{{.+}}, %{{.+}}, %[[S0]])
// CHECK: scf.for %[[K:.+]] =
// CHECK: "hw.tma_load"(%{{.+}}, %[[AS]], %[[BAR]], %[[S:[^,]+]], %{{.+}}, %{{.+}}, %[[S]])
// CHECK: "hw.mbarrier_wait"(%[[BAR]], %{{[0-9]+}}, %{{[0-9]+}})
// CHECK: "hw.mma"(%[[AS]]
// CHECK: "hw.mbarrier_wait"(%[[BAR]]
// CHECK-NOT: hw.pipeline
!A = memref<64x256xf16>
!B = memref<256x64xf16>
!As = memref<64x64xf16, #gpu.address_space<workgroup>>
!Bs = memref<64x64xf16, #gpu.address_space<workgroup>>
!Acc = memref<64x64xf32, #gpu.address_space<private>>
func.func @tma(%a: !A, %b: !B) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %bar = "hw.mbarrier_init"() {count = 2 : i64} : () -> !hw.mbarrier
  %as = "hw.alloc"() : () -> !As
  %bs = "hw.alloc"() : () -> !Bs
  %acc = "hw.alloc"() : () -> !Acc
  scf.for %k = %c0 to %c256 step %c64 {
    "hw.pipeline"() {stages = 2 : i64} : () -> ()
    "hw.tma_load"(%a, %as, %bar, %c0, %c0, %k) : (!A, !As, !hw.mbarrier, index, index, index) -> ()
    "hw.tma_load"(%b, %bs, %bar, %c0, %k, %c0) : (!B, !Bs, !hw.mbarrier, index, index, index) -> ()
    %j = arith.divui %k, %c64 : index
    %parity = arith.remui %j, %c2 : index
    "hw.mbarrier_wait"(%bar, %c0, %parity) : (!hw.mbarrier, index, index) -> ()
    "hw.mma"(%as, %bs, %acc) : (!As, !Bs, !Acc) -> ()
    "hw.barrier"() : () -> ()
  }
  return
}

// -----

// One stage: nothing to pipeline; the annotation goes.
// CHECK-LABEL: func.func @one_stage
// CHECK: scf.for
// CHECK-NOT: hw.pipeline
// CHECK: "hw.wait"() {pending = 0 : i64}
func.func @one_stage(%a: memref<64x128xf32>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %s = "hw.alloc"() : () -> memref<64x32xf32, #gpu.address_space<workgroup>>
  %r = "hw.alloc"() : () -> memref<64x32xf32, #gpu.address_space<private>>
  scf.for %k = %c0 to %c128 step %c32 {
    "hw.pipeline"() {stages = 1 : i64} : () -> ()
    %t = "hw.async_copy"(%a, %s, %c0, %k) : (memref<64x128xf32>, memref<64x32xf32, #gpu.address_space<workgroup>>, index, index) -> !hw.token
    "hw.commit"(%t) : (!hw.token) -> ()
    "hw.wait"() {pending = 0 : i64} : () -> ()
    "hw.copy"(%s, %r, %c0, %c0) : (memref<64x32xf32, #gpu.address_space<workgroup>>, memref<64x32xf32, #gpu.address_space<private>>, index, index) -> ()
    "hw.barrier"() : () -> ()
  }
  return
}
