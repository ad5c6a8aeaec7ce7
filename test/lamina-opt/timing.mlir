// --mlir-timing reports the time of each pass on stderr, output unchanged.
// RUN: lamina-opt %s --cse --canonicalize --mlir-timing 2>&1 >/dev/null | FileCheck %s
// RUN: lamina-opt %s -p 'builtin.module(func.func(cse, nn-canonicalize))' --mlir-timing 2>&1 >/dev/null | FileCheck %s --check-prefix=NESTED
// RUN: lamina-opt %s --cse --mlir-timing 2>/dev/null | FileCheck %s --check-prefix=OUT

// CHECK: Execution time report
// CHECK: Total Execution Time:
// CHECK: ----Wall Time----  ----Name----
// CHECK: CSE
// CHECK: Canonicalizer
// CHECK: Total

// A Lamina pass nested in func.func runs at module level and visits the
// functions itself.
// NESTED: 'func.func' Pipeline
// NESTED-NEXT: CSE
// NESTED: NNCanonicalize
// NESTED: Total

// OUT: func.func @f
// OUT-NOT: Execution time report
func.func @f(%a: f32) -> f32 {
  %0 = arith.addf %a, %a : f32
  return %0 : f32
}
