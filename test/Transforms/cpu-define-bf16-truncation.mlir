// RUN: lamina-opt %s --split-input-file --cpu-define-bf16-truncation | FileCheck %s

// The module gains a weak definition of the f32 -> bf16 conversion that
// LLVM calls on CPUs without a bf16 conversion instruction: round to
// nearest even, NaNs quiet.

// CHECK-LABEL: llvm.func @kernel
// CHECK-LABEL: llvm.func weak @__truncsfbf2(%{{.+}}: f32) -> bf16
// CHECK: llvm.bitcast %{{.+}} : f32 to i32
// CHECK: llvm.icmp "ugt"
// CHECK: llvm.select
// CHECK: llvm.bitcast %{{.+}} : i16 to bf16
llvm.func @kernel(%x: bf16) -> bf16 {
  llvm.return %x : bf16
}

// -----

// A declaration of it (a call written out) becomes the definition.
// CHECK-LABEL: llvm.func @caller
// CHECK: llvm.call @__truncsfbf2
// CHECK-LABEL: llvm.func weak @__truncsfbf2(
// CHECK-NEXT: llvm.bitcast
// CHECK-NOT: llvm.func{{.*}}@__truncsfbf2
llvm.func @__truncsfbf2(f32) -> bf16
llvm.func @caller(%x: f32) -> bf16 {
  %0 = llvm.call @__truncsfbf2(%x) : (f32) -> bf16
  llvm.return %0 : bf16
}

// -----

// A module that defines it keeps its own.
// CHECK-LABEL: llvm.func @__truncsfbf2(
// CHECK-NEXT: llvm.mlir.constant(0.000000e+00 : bf16)
// CHECK-NOT: llvm.func{{.*}}@__truncsfbf2
llvm.func @__truncsfbf2(%x: f32) -> bf16 {
  %0 = llvm.mlir.constant(0.0 : bf16) : bf16
  llvm.return %0 : bf16
}
