// RUN: lamina-opt %s | lamina-opt | FileCheck %s

// IRDL (LLVM 22) binds one type to all values of a variadic operand; the first
// operand of nn.concat has a constraint of its own, so two tensors of
// different sizes concatenate (invalid-data-movement.mlir has the limit).

// CHECK-LABEL: func.func @concat_different_sizes
// CHECK: "nn.concat"(%{{.+}}, %{{.+}}) {axis = 0 : i64} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<5x4xf32>
func.func @concat_different_sizes(%a: tensor<2x4xf32>, %b: tensor<3x4xf32>) -> tensor<5x4xf32> {
  %0 = "nn.concat"(%a, %b) {axis = 0 : i64} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<5x4xf32>
  return %0 : tensor<5x4xf32>
}
