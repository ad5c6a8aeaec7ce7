// lamina-run --bind: the named weights (or the arguments given by
// position) are bound once; the run takes the others, and --check still
// compares with the reference of the whole program.
// RUN: lamina-run %s --random --bind=parameters --check | FileCheck %s
// RUN: lamina-run %s --random --bind=0,fc.bias --check -q --bench | FileCheck %s --check-prefix=MIXED
// RUN: not lamina-run %s --random --bind=fc.scale 2>&1 | FileCheck %s --check-prefixes=UNKNOWN,CLEAN
// RUN: not lamina-run %s --random --bind=0,1,2 2>&1 | FileCheck %s --check-prefixes=ALL,CLEAN

// CHECK: res0: tensor<2x4xf32> =
// CHECK: check res0 (tensor<2x4xf32>): {{.*}} ok
// CHECK: check: all results match the reference
// MIXED: check: all results match the reference
// MIXED: run: median
// CLEAN-NOT: Traceback
// UNKNOWN: {{^}}lamina-run: error: --bind: @main has no argument 'fc.scale' (arguments 0 to 2; names: fc.weight, fc.bias){{$}}
// ALL: {{^}}lamina-run: error: --bind: @main: binding every argument leaves nothing to call with{{$}}
func.func @main(%w: tensor<4x3xf32> {lamina.parameter = "fc.weight"},
                %b: tensor<4xf32> {lamina.parameter = "fc.bias"},
                %x: tensor<2x3xf32>) -> tensor<2x4xf32> {
  %t = "nn.transpose"(%w) {perm = array<i64: 1, 0>} : (tensor<4x3xf32>) -> tensor<3x4xf32>
  %y = "nn.matmul"(%x, %t) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %z = "nn.add"(%y, %b) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %z : tensor<2x4xf32>
}
