// RUN: lamina-opt %s | lamina-opt | FileCheck %s

// The values of a variadic operand may differ in type: nn.concat joins
// tensors of different sizes, two or more.

// CHECK-LABEL: func.func @concat_different_sizes
// CHECK: "nn.concat"(%{{.+}}, %{{.+}}) {axis = 0 : i64} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<5x4xf32>
func.func @concat_different_sizes(%a: tensor<2x4xf32>, %b: tensor<3x4xf32>) -> tensor<5x4xf32> {
  %0 = "nn.concat"(%a, %b) {axis = 0 : i64} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<5x4xf32>
  return %0 : tensor<5x4xf32>
}

// CHECK-LABEL: func.func @concat_three_sizes
// CHECK: "nn.concat"(%{{.+}}, %{{.+}}, %{{.+}}) {axis = 0 : i64} : (tensor<1x4xf32>, tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<6x4xf32>
func.func @concat_three_sizes(%x: tensor<1x4xf32>, %y: tensor<2x4xf32>, %z: tensor<3x4xf32>) -> tensor<6x4xf32> {
  %0 = "nn.concat"(%x, %y, %z) {axis = 0 : i64} : (tensor<1x4xf32>, tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<6x4xf32>
  return %0 : tensor<6x4xf32>
}
