// RUN: lamina-opt %s --split-input-file --cpu-disable-llvm-loop-vectorizer | FileCheck %s
// RUN: lamina-opt %s --split-input-file --cpu-disable-llvm-loop-vectorizer --convert-scf-to-cf --convert-to-llvm --reconcile-unrealized-casts | FileCheck %s --check-prefix=LLVM

// A loop over vectors (and the loop around it) is marked; the scalar loop
// is left to LLVM's vectorizer.
// CHECK: #[[VECTORIZE:.+]] = #llvm.loop_vectorize<disable = true>
// CHECK: #[[DISABLED:.+]] = #llvm.loop_annotation<vectorize = #[[VECTORIZE]]>
// CHECK-LABEL: func.func @loops
// CHECK: scf.for
// CHECK: scf.for
// CHECK: } {loop_annotation = #[[DISABLED]]}
// CHECK: } {loop_annotation = #[[DISABLED]]}
// CHECK: scf.for
// CHECK-NOT: loop_annotation
// CHECK: return
// The annotation lands on each marked loop's back edge.
// LLVM: #[[DISABLED:.+]] = #llvm.loop_annotation<vectorize = #{{.+}}>
// LLVM-LABEL: llvm.func @loops
// LLVM-COUNT-2: llvm.br {{.*}} {loop_annotation = #[[DISABLED]]}
// LLVM-NOT: loop_annotation
// LLVM: llvm.return
func.func @loops(%a: memref<64x64xf32>, %b: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c64 step %c1 {
    scf.for %j = %c0 to %c64 step %c16 {
      %v = vector.transfer_read %a[%i, %j], %zero {in_bounds = [true]} : memref<64x64xf32>, vector<16xf32>
      %w = arith.addf %v, %v : vector<16xf32>
      vector.transfer_write %w, %a[%i, %j] {in_bounds = [true]} : vector<16xf32>, memref<64x64xf32>
    }
  }
  scf.for %k = %c0 to %c64 step %c1 {
    %x = memref.load %b[%k] : memref<64xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %b[%k] : memref<64xf32>
  }
  return
}

// -----

// A loop that has an annotation keeps it.
// CHECK: #[[UNROLL:.+]] = #llvm.loop_unroll<disable = true>
// CHECK: #[[KEPT:.+]] = #llvm.loop_annotation<unroll = #[[UNROLL]]>
// CHECK-LABEL: func.func @annotated
// CHECK: } {loop_annotation = #[[KEPT]]}
func.func @annotated(%a: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  scf.for %j = %c0 to %c64 step %c16 {
    %v = vector.transfer_read %a[%j], %zero {in_bounds = [true]} : memref<64xf32>, vector<16xf32>
    vector.transfer_write %v, %a[%j] {in_bounds = [true]} : vector<16xf32>, memref<64xf32>
  } {loop_annotation = #llvm.loop_annotation<unroll = #llvm.loop_unroll<disable = true>>}
  return
}
