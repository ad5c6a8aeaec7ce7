// RUN: lamina-opt %s --split-input-file --cpu-protect-inputs | FileCheck %s

// CHECK-LABEL: func.func @tensor_arguments
// CHECK-SAME: (%{{.+}}: tensor<4xf32> {bufferization.writable = false}, %{{.+}}: tensor<2x3xf16> {bufferization.writable = false})
func.func @tensor_arguments(%x: tensor<4xf32>, %y: tensor<2x3xf16>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// An explicitly public function is protected too.
// CHECK-LABEL: func.func public @explicitly_public
// CHECK-SAME: tensor<4xi1> {bufferization.writable = false}
func.func public @explicitly_public(%x: tensor<4xi1>) -> tensor<4xi1> {
  return %x : tensor<4xi1>
}

// -----

// Other argument attributes stay; arguments that are not tensors get none.
// CHECK-LABEL: func.func @mixed_arguments
// CHECK-SAME: (%{{.+}}: tensor<4xf32> {bufferization.writable = false, lamina.note = "kept"}, %{{.+}}: f32, %{{.+}}: memref<4xf32> {lamina.note = "also kept"})
func.func @mixed_arguments(%x: tensor<4xf32> {lamina.note = "kept"}, %s: f32,
                           %m: memref<4xf32> {lamina.note = "also kept"}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// Private functions and declarations are not entry points: left alone.
// CHECK-LABEL: func.func private @helper
// CHECK-NOT: bufferization.writable
// CHECK-LABEL: func.func private @external
// CHECK-NOT: bufferization.writable
func.func private @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func private @external(tensor<4xf32>) -> tensor<4xf32>
