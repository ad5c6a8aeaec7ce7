// lamina-run on a program with '?' dims: --dims gives their sizes for
// --random, by the names of the arguments' nn.dims or by position; the
// same compiled program runs at every size; a missing size, an unknown
// name and sizes that break the program's rules are errors.
// RUN: lamina-run %s --random --check --dims S=37,T=37 | FileCheck %s
// RUN: lamina-run %s --random --check --dims S=1,T=1 -q | FileCheck %s --check-prefix=ONE
// RUN: not lamina-run %s --random 2>&1 | FileCheck %s --check-prefixes=MISSING,CLEAN
// RUN: not lamina-run %s --random --dims S=4,T=4,B=2 2>&1 | FileCheck %s --check-prefixes=UNKNOWN,CLEAN
// RUN: not lamina-run %s --random --dims S=4,T=3 2>&1 | FileCheck %s --check-prefixes=BROKEN,CLEAN
// RUN: not lamina-compile %s --emit=header 2>&1 | FileCheck %s --check-prefixes=SHARED,CLEAN

// CHECK: res0: tensor<?x16xf32> =
// CHECK: check res0 (tensor<?x16xf32>): {{.*}} ok
// CHECK: check: all results match the reference
// ONE: check: all results match the reference
// CLEAN-NOT: Traceback
// MISSING: {{^}}lamina-run: error: the entry function has '?' dims (S, T): give their sizes with --dims NAME=SIZE,...{{$}}
// UNKNOWN: {{^}}lamina-run: error: --dims names B, which no '?' dim of @main has (its dims: S, T){{$}}
// SHARED: lamina-run-dims.mlir:{{[0-9]+}}:1: error: @main: tensor<?x8xf32> has '?' dims; a shared library's C ABI passes buffers of static sizes
// BROKEN: lamina-run-dims.mlir:[[# @LINE + 5]]:8: error: 'nn.add' op dim 0 of the broadcast differs at run time: 4 vs 3 (a '?' dim must equal the others: it does not broadcast)
func.func @main(%x: tensor<?x8xf32> {nn.dims = ["S"]}, %w: tensor<8x16xf32>,
                %r: tensor<?x16xf32> {nn.dims = ["T"]}) -> tensor<?x16xf32> {
  %0 = "nn.matmul"(%x, %w) : (tensor<?x8xf32>, tensor<8x16xf32>) -> tensor<?x16xf32>
  %1 = "nn.softmax"(%0) {axis = -1 : i64} : (tensor<?x16xf32>) -> tensor<?x16xf32>
  %2 = "nn.add"(%1, %r) : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  return %2 : tensor<?x16xf32>
}
