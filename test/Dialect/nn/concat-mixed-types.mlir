// RUN: lamina-opt %s | lamina-opt | FileCheck %s

// Known bug: IRDL (LLVM 22) binds a single type to all operands of a variadic
// operand (a constraint variable is unified across its uses), so nn.concat
// rejects operands whose shapes differ along the concat axis with
// "expected 'tensor<2x4xf32>' but got 'tensor<3x4xf32>'". Concatenating
// differently sized tensors is what concat is for; remove the XFAIL once the
// op definition accepts it.
// XFAIL: *

// CHECK-LABEL: func.func @concat_different_sizes
// CHECK: "nn.concat"(%{{.+}}, %{{.+}}) {axis = 0 : i64} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<5x4xf32>
func.func @concat_different_sizes(%a: tensor<2x4xf32>, %b: tensor<3x4xf32>) -> tensor<5x4xf32> {
  %0 = "nn.concat"(%a, %b) {axis = 0 : i64} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<5x4xf32>
  return %0 : tensor<5x4xf32>
}
