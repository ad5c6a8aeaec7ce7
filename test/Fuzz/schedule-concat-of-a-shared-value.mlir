// Found by lamina-fuzz (--program 25, 1000009, 1000027, 1000043), reduced: a
// value used by an elementwise op that is a result and, directly and through
// another elementwise op, by a concat. The CPU schedule fails to apply:
// "requires exactly one containing_op handle (got 0)" in cpu-apply-schedule.
// XFAIL: *
// RUN: lamina-run %s --random --seed 0 --check -q | FileCheck %s
// CHECK: check: all results match the reference
func.func @main(%x: tensor<2xf32>, %y: tensor<f32>) -> (tensor<4xf32>, tensor<2xf32>) {
  %v = "nn.add"(%x, %y) : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %s = "nn.sqrt"(%v) : (tensor<2xf32>) -> tensor<2xf32>
  %a = "nn.abs"(%v) : (tensor<2xf32>) -> tensor<2xf32>
  %c = "nn.concat"(%a, %v) {axis = 0 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
  return %c, %s : tensor<4xf32>, tensor<2xf32>
}
