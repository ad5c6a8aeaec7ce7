// RUN: lamina-compile %s --target=cuda:sm_80 --emit=ptx | FileCheck %s
// RUN: lamina-compile %s --target=cuda:sm_80 --emit=ptx -o %t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_80 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}
// RUN: %if ptxas %{ lamina-compile %s --target=cuda:sm_80 --emit=cubin -o %t.lamina.cubin %}

// hw kernels for sm_80: a cp.async pipeline feeding ldmatrix + mma.sync
// (f16), synchronous copies and barriers (bf16), tf32 fragments loaded
// element by element with a register-tile epilogue; ptxas accepts the PTX,
// with no spills.

// CHECK: .version 7.0
// CHECK: .target sm_80

// CHECK-LABEL: .entry f16_pipelined(
// CHECK: cp.async.cg.shared.global [{{.+}}], [{{.+}}], 16, {{%r[0-9]+}};
// CHECK: cp.async.commit_group;
// CHECK: cp.async.wait_group 1;
// CHECK-NEXT: bar.sync 0;
// CHECK: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK: cp.async.wait_group 0;
// CHECK: ret;

// CHECK-LABEL: .entry bf16_sync(
// CHECK: bar.sync 0;
// CHECK: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK-NOT: cp.async
// CHECK: ret;

// CHECK-LABEL: .entry tf32_relu(
// CHECK-NOT: ldmatrix
// CHECK: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// CHECK: max.NaN.f32
// CHECK: ret;

// PTXAS-DAG: Compiling entry function 'bf16_sync' for 'sm_80'
// PTXAS-DAG: Compiling entry function 'f16_pipelined' for 'sm_80'
// PTXAS-DAG: Compiling entry function 'tf32_relu' for 'sm_80'
// PTXAS-NOT: bytes spill stores, {{[1-9]}}
// PTXAS: 0 bytes spill stores, 0 bytes spill loads

!Af = memref<256x128xf16>
!Bf = memref<128x256xf16>
!Cf = memref<256x256xf32>
!As = memref<3x128x32xf16, #gpu.address_space<workgroup>>
!Bs = memref<3x32x128xf16, #gpu.address_space<workgroup>>
!Acc = memref<128x128xf32, #gpu.address_space<private>>

func.func @main(%a: !Af, %b: !Bf, %c: !Cf, %ab: memref<64x64xbf16>, %bb: memref<64x64xbf16>, %cb: memref<64x64xf32>, %at: memref<64x32xf32>, %bt: memref<32x64xf32>, %ct: memref<64x64xf32>) {
  "hw.launch"(%a, %b, %c) {kernel = @f16_pipelined, grid = array<i64: 2, 2>, block = array<i64: 128>} : (!Af, !Bf, !Cf) -> ()
  "hw.launch"(%ab, %bb, %cb) {kernel = @bf16_sync, grid = array<i64: 1>, block = array<i64: 128>} : (memref<64x64xbf16>, memref<64x64xbf16>, memref<64x64xf32>) -> ()
  "hw.launch"(%at, %bt, %ct) {kernel = @tf32_relu, grid = array<i64: 1>, block = array<i64: 64>} : (memref<64x32xf32>, memref<32x64xf32>, memref<64x64xf32>) -> ()
  return
}

// Three stages over K = 128 (4 tiles of 32): two in flight while one is
// multiplied.
func.func @f16_pipelined(%a: !Af, %b: !Bf, %c: !Cf) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c32 = arith.constant 32 : index
  %c128 = arith.constant 128 : index
  %bx = "hw.block_id"() {dim = 0 : i64} : () -> index
  %by = "hw.block_id"() {dim = 1 : i64} : () -> index
  %row = arith.muli %bx, %c128 : index
  %col = arith.muli %by, %c128 : index
  %as = "hw.alloc"() : () -> !As
  %bs = "hw.alloc"() : () -> !Bs
  %acc = "hw.alloc"() : () -> !Acc
  "hw.fill"(%acc) : (!Acc) -> ()
  %ta0 = "hw.async_copy"(%a, %as, %row, %c0, %c0) : (!Af, !As, index, index, index) -> !hw.token
  %tb0 = "hw.async_copy"(%b, %bs, %c0, %col, %c0) : (!Bf, !Bs, index, index, index) -> !hw.token
  "hw.commit"(%ta0, %tb0) : (!hw.token, !hw.token) -> ()
  %ta1 = "hw.async_copy"(%a, %as, %row, %c32, %c1) : (!Af, !As, index, index, index) -> !hw.token
  %tb1 = "hw.async_copy"(%b, %bs, %c32, %col, %c1) : (!Bf, !Bs, index, index, index) -> !hw.token
  "hw.commit"(%ta1, %tb1) : (!hw.token, !hw.token) -> ()
  scf.for %k = %c0 to %c2 step %c1 {
    "hw.wait"() {pending = 1 : i64} : () -> ()
    %next = arith.addi %k, %c2 : index
    %slot = arith.remui %next, %c3 : index
    %kk = arith.muli %next, %c32 : index
    %ta = "hw.async_copy"(%a, %as, %row, %kk, %slot) : (!Af, !As, index, index, index) -> !hw.token
    %tb = "hw.async_copy"(%b, %bs, %kk, %col, %slot) : (!Bf, !Bs, index, index, index) -> !hw.token
    "hw.commit"(%ta, %tb) : (!hw.token, !hw.token) -> ()
    %stage = arith.remui %k, %c3 : index
    "hw.mma"(%as, %bs, %acc, %stage, %stage) : (!As, !Bs, !Acc, index, index) -> ()
  }
  "hw.wait"() {pending = 1 : i64} : () -> ()
  "hw.mma"(%as, %bs, %acc, %c2, %c2) : (!As, !Bs, !Acc, index, index) -> ()
  "hw.wait"() {pending = 0 : i64} : () -> ()
  "hw.mma"(%as, %bs, %acc, %c0, %c0) : (!As, !Bs, !Acc, index, index) -> ()
  "hw.store"(%acc, %c, %row, %col) {operandSegmentSizes = array<i32: 1, 1, 0, 2>} : (!Acc, !Cf, index, index) -> ()
  return
}

func.func @bf16_sync(%a: memref<64x64xbf16>, %b: memref<64x64xbf16>, %c: memref<64x64xf32>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %as = "hw.alloc"() : () -> memref<64x64xbf16, #gpu.address_space<workgroup>>
  %bs = "hw.alloc"() : () -> memref<64x64xbf16, #gpu.address_space<workgroup>>
  %acc = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  "hw.fill"(%acc) : (memref<64x64xf32, #gpu.address_space<private>>) -> ()
  "hw.copy"(%a, %as, %c0, %c0) : (memref<64x64xbf16>, memref<64x64xbf16, #gpu.address_space<workgroup>>, index, index) -> ()
  "hw.copy"(%b, %bs, %c0, %c0) : (memref<64x64xbf16>, memref<64x64xbf16, #gpu.address_space<workgroup>>, index, index) -> ()
  "hw.barrier"() : () -> ()
  "hw.mma"(%as, %bs, %acc) : (memref<64x64xbf16, #gpu.address_space<workgroup>>, memref<64x64xbf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  "hw.store"(%acc, %c, %c0, %c0) {operandSegmentSizes = array<i32: 1, 1, 0, 2>} : (memref<64x64xf32, #gpu.address_space<private>>, memref<64x64xf32>, index, index) -> ()
  return
}

func.func @tf32_relu(%a: memref<64x32xf32>, %b: memref<32x64xf32>, %c: memref<64x64xf32>) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %as = "hw.alloc"() : () -> memref<64x32xf32, #gpu.address_space<workgroup>>
  %bs = "hw.alloc"() : () -> memref<32x64xf32, #gpu.address_space<workgroup>>
  %acc = "hw.alloc"() : () -> memref<64x64xf32, #gpu.address_space<private>>
  "hw.copy"(%c, %acc, %c0, %c0) : (memref<64x64xf32>, memref<64x64xf32, #gpu.address_space<private>>, index, index) -> ()
  %t0 = "hw.async_copy"(%a, %as, %c0, %c0) : (memref<64x32xf32>, memref<64x32xf32, #gpu.address_space<workgroup>>, index, index) -> !hw.token
  %t1 = "hw.async_copy"(%b, %bs, %c0, %c0) : (memref<32x64xf32>, memref<32x64xf32, #gpu.address_space<workgroup>>, index, index) -> !hw.token
  "hw.commit"(%t0, %t1) : (!hw.token, !hw.token) -> ()
  "hw.wait"() {pending = 0 : i64} : () -> ()
  "hw.mma"(%as, %bs, %acc) : (memref<64x32xf32, #gpu.address_space<workgroup>>, memref<32x64xf32, #gpu.address_space<workgroup>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  "hw.relu"(%acc, %acc) : (memref<64x64xf32, #gpu.address_space<private>>, memref<64x64xf32, #gpu.address_space<private>>) -> ()
  "hw.copy"(%acc, %c, %c0, %c0) : (memref<64x64xf32, #gpu.address_space<private>>, memref<64x64xf32>, index, index) -> ()
  return
}
