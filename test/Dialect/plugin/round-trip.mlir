// RUN: lamina-opt --load-plugin=%S/Inputs/plugtest.py %s | lamina-opt --load-plugin=%S/Inputs/plugtest.py | FileCheck %s

// A dialect defined in a user's file: its ops print and parse in the
// generic form, with memrefs in workgroup memory, several results, its own
// token type and a symbol attribute.

// CHECK-LABEL: func.func @fill
// CHECK: "plugtest.fill_shared"(%{{.+}}) {value = 1.000000e+00 : f32} : (memref<16x16xf16, #gpu.address_space<workgroup>>) -> ()
func.func @fill(%t: memref<16x16xf16, #gpu.address_space<workgroup>>) {
  "plugtest.fill_shared"(%t) {value = 1.0 : f32} : (memref<16x16xf16, #gpu.address_space<workgroup>>) -> ()
  return
}

// CHECK-LABEL: func.func @split
// CHECK: %[[S:.+]]:3 = "plugtest.split"(%{{.+}}) : (tensor<2x8xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, !plugtest.token)
// CHECK: return %[[S]]#0, %[[S]]#1, %[[S]]#2
func.func @split(%x: tensor<2x8xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, !plugtest.token) {
  %lo, %hi, %done = "plugtest.split"(%x) : (tensor<2x8xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, !plugtest.token)
  return %lo, %hi, %done : tensor<2x4xf32>, tensor<2x4xf32>, !plugtest.token
}

// CHECK-LABEL: func.func @invoke
// CHECK: "plugtest.invoke"(%{{.+}}, %{{.+}}) {callee = @kernel} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
func.func @invoke(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y:2 = "plugtest.invoke"(%x, %x) {callee = @kernel} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %y#1 : tensor<4xf32>
}

// CHECK-LABEL: func.func @scaled_tanh
// CHECK: "plugtest.scaled_tanh"(%{{.+}}) {alpha = 2.000000e+00 : f64} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK: "plugtest.scaled_tanh"(%{{.+}}, %{{.+}}) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
func.func @scaled_tanh(%x: tensor<4xf32>, %m: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = "plugtest.scaled_tanh"(%x) {alpha = 2.0 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = "plugtest.scaled_tanh"(%m, %0) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %1 : tensor<2x4xf32>
}
