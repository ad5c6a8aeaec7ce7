// RUN: %PYTHON -c "import numpy as np; r = np.random.default_rng(1); np.savez('%t.in.npz', arg0=r.uniform(-1, 1, (200, 96)).astype(np.float16), arg1=r.uniform(-1, 1, (96, 100)).astype(np.float16), arg2=r.uniform(-1, 1, 100).astype(np.float16), arg3=np.zeros((200, 100), np.float16))"
// RUN: lamina-run %s --target=cuda:sm_80 --emulate --inputs %t.in.npz --output %t.out.npz | FileCheck %s
// RUN: %PYTHON -c "import numpy as np; i = np.load('%t.in.npz'); o = np.load('%t.out.npz'); f = lambda x: x.astype(np.float32); want = np.maximum(f(i['arg0']) @ f(i['arg1']) + f(i['arg2']), 0).astype(np.float16); print('max error', float(np.abs(f(o['arg3']) - f(want)).max()), 'untouched', bool((o['arg0'] == i['arg0']).all()))" | FileCheck %s --check-prefix=NUMPY
// RUN: lamina-compile %s --target=cuda:sm_80 --emit=hw | lamina-run - --target=cuda:sm_90a --emulate --inputs %t.in.npz -q
// RUN: not lamina-run %s --emulate --inputs %t.in.npz 2>&1 | FileCheck %s --check-prefix=NOT-GPU

// A three-stage cp.async pipeline over K feeding the tensor cores, on 4x2
// blocks of 64x64 tiles of a 200x100 result (the tiles do not divide it:
// loads past the ends read zeros, stores past them are skipped), with a
// bias + relu epilogue; emulated on the CPU and compared with NumPy.

// CHECK: arg3: memref<200x100xf16> =
// NUMPY: max error {{0\.0|0\.00[0-9]+}} untouched True
// NOT-GPU: error: target 'cpu' has no emulation; --emulate is for GPU targets

!A = memref<200x96xf16>
!B = memref<96x100xf16>
!Bias = memref<100xf16>
!C = memref<200x100xf16>
!As = memref<3x64x32xf16, #gpu.address_space<workgroup>>
!Bs = memref<3x32x64xf16, #gpu.address_space<workgroup>>
!Acc = memref<64x64xf32, #gpu.address_space<private>>

func.func @main(%a: !A, %b: !B, %bias: !Bias, %c: !C) {
  "hw.launch"(%a, %b, %bias, %c) {kernel = @matmul, grid = array<i64: 4, 2>, block = array<i64: 128>} : (!A, !B, !Bias, !C) -> ()
  return
}

func.func @matmul(%a: !A, %b: !B, %bias: !Bias, %c: !C) attributes {hw.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c32 = arith.constant 32 : index
  %c64 = arith.constant 64 : index
  %bx = "hw.block_id"() {dim = 0 : i64} : () -> index
  %by = "hw.block_id"() {dim = 1 : i64} : () -> index
  %row = arith.muli %bx, %c64 : index
  %col = arith.muli %by, %c64 : index
  %as = "hw.alloc"() : () -> !As
  %bs = "hw.alloc"() : () -> !Bs
  %acc = "hw.alloc"() : () -> !Acc
  "hw.fill"(%acc) : (!Acc) -> ()
  %ta0 = "hw.async_copy"(%a, %as, %row, %c0, %c0) : (!A, !As, index, index, index) -> !hw.token
  %tb0 = "hw.async_copy"(%b, %bs, %c0, %col, %c0) : (!B, !Bs, index, index, index) -> !hw.token
  "hw.commit"(%ta0, %tb0) : (!hw.token, !hw.token) -> ()
  %ta1 = "hw.async_copy"(%a, %as, %row, %c32, %c1) : (!A, !As, index, index, index) -> !hw.token
  %tb1 = "hw.async_copy"(%b, %bs, %c32, %col, %c1) : (!B, !Bs, index, index, index) -> !hw.token
  "hw.commit"(%ta1, %tb1) : (!hw.token, !hw.token) -> ()
  scf.for %k = %c0 to %c1 step %c1 {
    "hw.wait"() {pending = 1 : i64} : () -> ()
    %next = arith.addi %k, %c2 : index
    %slot = arith.remui %next, %c3 : index
    %kk = arith.muli %next, %c32 : index
    %ta = "hw.async_copy"(%a, %as, %row, %kk, %slot) : (!A, !As, index, index, index) -> !hw.token
    %tb = "hw.async_copy"(%b, %bs, %kk, %col, %slot) : (!B, !Bs, index, index, index) -> !hw.token
    "hw.commit"(%ta, %tb) : (!hw.token, !hw.token) -> ()
    %stage = arith.remui %k, %c3 : index
    "hw.mma"(%as, %bs, %acc, %stage, %stage) : (!As, !Bs, !Acc, index, index) -> ()
  }
  "hw.wait"() {pending = 1 : i64} : () -> ()
  "hw.mma"(%as, %bs, %acc, %c1, %c1) : (!As, !Bs, !Acc, index, index) -> ()
  "hw.wait"() {pending = 0 : i64} : () -> ()
  "hw.mma"(%as, %bs, %acc, %c2, %c2) : (!As, !Bs, !Acc, index, index) -> ()
  "hw.store"(%acc, %c, %bias, %row, %col) {epilogue = @bias_relu, operandSegmentSizes = array<i32: 1, 1, 1, 2>} : (!Acc, !C, !Bias, index, index) -> ()
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
