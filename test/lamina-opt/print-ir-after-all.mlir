// --mlir-print-ir-after-all prints the whole module to stderr after each
// pass, headed by the pass and the op it ran on; the output is unchanged.
// RUN: lamina-opt %s --cse --canonicalize --mlir-print-ir-after-all 2>&1 >/dev/null | FileCheck %s
// RUN: lamina-opt %s --cse --canonicalize --mlir-print-ir-after-all 2>/dev/null | FileCheck %s --check-prefix=OUT
// RUN: lamina-opt %s -p 'builtin.module(func.func(nn-canonicalize))' --mlir-print-ir-after-all 2>&1 >/dev/null | FileCheck %s --check-prefix=LAMINA
// RUN: lamina-opt %s -p 'builtin.module(func.func(cse))' --mlir-print-ir-before-all 2>&1 >/dev/null | FileCheck %s --check-prefix=BEFORE
// RUN: lamina-opt %s --mlir-print-ir-after-all 2>&1 >/dev/null | count 0

// CHECK: // -----// IR Dump After CSE (cse) ('builtin.module' operation) //----- //
// CHECK-NEXT: module {
// CHECK: arith.addf
// CHECK-NOT: arith.addf
// CHECK: arith.mulf
// CHECK: // -----// IR Dump After Canonicalizer (canonicalize) ('builtin.module' operation) //----- //
// CHECK-NEXT: module {
// CHECK-NOT: arith.mulf
// CHECK: return

// OUT-NOT: IR Dump
// OUT: func.func @f
// OUT-NOT: IR Dump

// A Lamina pass runs as a module-level pass that visits its anchor ops.
// LAMINA: // -----// IR Dump After {{.+}} (nn-canonicalize) ('builtin.module' operation) //----- //
// LAMINA-NOT: "nn.exp"
// LAMINA: return

// BEFORE: // -----// IR Dump Before CSE (cse) ('func.func' operation: @f) //----- //
// BEFORE-COUNT-2: arith.addf

func.func @f(%a: f32, %x: tensor<4xf32>) -> f32 {
  %one = arith.constant 1.0 : f32
  %0 = arith.addf %a, %a : f32
  %1 = arith.addf %a, %a : f32
  %2 = arith.mulf %0, %one : f32
  %unused = "nn.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %2 : f32
}
