// RUN: lamina-compile %s --target=cuda:sm_90a --emit=ptx | FileCheck %s
// RUN: lamina-compile %s --target=cuda:sm_90a --emit=ptx -o %t.ptx
// RUN: %if ptxas %{ %ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS %}
// RUN: lamina-compile %s --target=cuda:sm_90a --emit=gpu | FileCheck %s --check-prefix=GPU
// RUN: %PYTHON -c "import numpy as np; r = np.random.default_rng(2); np.savez('%t.in.npz', arg0=r.uniform(-1, 1, (200, 192)).astype(np.float16), arg1=r.uniform(-1, 1, (192, 128)).astype(np.float16), arg2=r.uniform(-1, 1, 128).astype(np.float16), arg3=np.zeros((200, 128), np.float16))"
// RUN: lamina-run %s --target=cuda:sm_90a --emulate --inputs %t.in.npz --output %t.out.npz -q
// RUN: %PYTHON -c "import numpy as np; i = np.load('%t.in.npz'); o = np.load('%t.out.npz'); f = lambda x: x.astype(np.float32); want = np.maximum(f(i['arg0']) @ f(i['arg1']) + f(i['arg2']), 0); print('max error', float(np.abs(f(o['arg3']) - want).max()) < 2e-2)" | FileCheck %s --check-prefix=NUMPY

// A hw kernel for sm_90a: a two-stage pipeline of TMA loads completing on
// mbarriers (A 128x64 in one swizzled box, B 64x128 in two), wgmma on the
// stages, a bias + relu epilogue; ptxas accepts the PTX with no spills, and
// the same kernel's emulation matches NumPy on shapes the tiles do not
// divide (200 rows).

// CHECK: .version 8.0
// CHECK: .target sm_90a
// CHECK-LABEL: .entry matmul(
// CHECK: mbarrier.init.shared.b64
// CHECK: mbarrier.arrive.expect_tx.shared.b64
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// CHECK: mbarrier.try_wait.parity.shared.b64
// CHECK: wgmma.fence.sync.aligned;
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// CHECK: wgmma.commit_group.sync.aligned;
// CHECK: wgmma.wait_group.sync.aligned 0;
// CHECK: bar.sync 0;
// CHECK: ret;

// PTXAS: Compiling entry function 'matmul' for 'sm_90a'
// PTXAS: 0 bytes spill stores, 0 bytes spill loads

// The host makes one descriptor per box shape and passes it after the
// kernel's arguments.
// GPU: nvgpu.tma.create.descriptor %{{.+}} box[%{{.+}}, %{{.+}}] : memref<*xf16> -> <tensor = memref<128x64xf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
// GPU: nvgpu.tma.create.descriptor %{{.+}} box[%{{.+}}, %{{.+}}] : memref<*xf16> -> <tensor = memref<64x64xf16, #gpu.address_space<workgroup>>, swizzle = swizzle_128b, l2promo = none, oob = zero, interleave = none>
// GPU: gpu.launch_func @hw_kernels::@matmul {{.+}} args({{.+}}, %{{.+}} : !llvm.ptr, %{{.+}} : !llvm.ptr)
// GPU: gpu.func @matmul({{.+}}, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr) kernel
// GPU: nvgpu.mbarrier.create -> <memorySpace = #gpu.address_space<workgroup>, num_barriers = 2>
// GPU: nvgpu.tma.async.load
// GPU: nvgpu.warpgroup.mma {{.+}} {transposeB}

// NUMPY: max error True

!A = memref<200x192xf16>
!B = memref<192x128xf16>
!Bias = memref<128xf16>
!C = memref<200x128xf16>
!As = memref<2x128x64xf16, #gpu.address_space<workgroup>>
!Bs = memref<2x64x128xf16, #gpu.address_space<workgroup>>
!Acc = memref<128x128xf32, #gpu.address_space<private>>

func.func @main(%a: !A, %b: !B, %bias: !Bias, %c: !C) {
  "hw.launch"(%a, %b, %bias, %c) {kernel = @matmul, grid = array<i64: 2>, block = array<i64: 128>} : (!A, !B, !Bias, !C) -> ()
  return
}

func.func @matmul(%a: !A, %b: !B, %bias: !Bias, %c: !C) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %bx = "hw.block_id"() {dim = 0 : i64} : () -> index
  %row = arith.muli %bx, %c128 : index
  %bar = "hw.mbarrier_init"() {count = 2 : i64, barriers = 2 : i64} : () -> !hw.mbarrier
  %as = "hw.alloc"() : () -> !As
  %bs = "hw.alloc"() : () -> !Bs
  %acc = "hw.alloc"() : () -> !Acc
  "hw.fill"(%acc) : (!Acc) -> ()
  "hw.tma_load"(%a, %as, %bar, %c0, %row, %c0, %c0) : (!A, !As, !hw.mbarrier, index, index, index, index) -> ()
  "hw.tma_load"(%b, %bs, %bar, %c0, %c0, %c0, %c0) : (!B, !Bs, !hw.mbarrier, index, index, index, index) -> ()
  scf.for %k = %c0 to %c3 step %c1 {
    %next = arith.addi %k, %c1 : index
    %more = arith.cmpi ult, %next, %c3 : index
    scf.if %more {
      %slot = arith.remui %next, %c2 : index
      %kk = arith.muli %next, %c64 : index
      "hw.tma_load"(%a, %as, %bar, %slot, %row, %kk, %slot) : (!A, !As, !hw.mbarrier, index, index, index, index) -> ()
      "hw.tma_load"(%b, %bs, %bar, %slot, %kk, %c0, %slot) : (!B, !Bs, !hw.mbarrier, index, index, index, index) -> ()
    }
    %stage = arith.remui %k, %c2 : index
    %round = arith.divui %k, %c2 : index
    %parity = arith.remui %round, %c2 : index
    "hw.mbarrier_wait"(%bar, %stage, %parity) : (!hw.mbarrier, index, index) -> ()
    "hw.mma"(%as, %bs, %acc, %stage, %stage) : (!As, !Bs, !Acc, index, index) -> ()
    "hw.barrier"() : () -> ()
  }
  "hw.store"(%acc, %c, %bias, %row, %c0) {epilogue = @bias_relu, operandSegmentSizes = array<i32: 1, 1, 1, 2>} : (!Acc, !C, !Bias, index, index) -> ()
  return
}

func.func private @bias_relu(%acc: f32, %bias: f16) -> f16 {
  %b = arith.extf %bias : f16 to f32
  %s = arith.addf %acc, %b : f32
  %zero = arith.constant 0.0 : f32
  %r = arith.maximumf %s, %zero : f32
  %h = arith.truncf %r : f32 to f16
  return %h : f16
}
