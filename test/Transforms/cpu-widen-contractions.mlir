// RUN: lamina-opt %s --split-input-file --cpu-widen-contractions | FileCheck %s
// RUN: lamina-run %s --entry matmul_bf16 --random --check -q | FileCheck %s --check-prefix=RAN
// RUN: lamina-run %s --entry conv_f16 --random --check -q | FileCheck %s --check-prefix=RAN

// f16 and bf16 contractions and convolutions become f32 ones on widened
// operands, their results rounded back; the program computes what it did
// (products accumulated in f32, rounded once), as the NumPy reference says.

// RAN: check: all results match the reference

// CHECK-LABEL: func.func @matmul_bf16
// CHECK: %[[A:.+]] = "nn.cast"(%arg0) : (tensor<32x48xbf16>) -> tensor<32x48xf32>
// CHECK: %[[B:.+]] = "nn.cast"(%arg1) : (tensor<48x40xbf16>) -> tensor<48x40xf32>
// CHECK: %[[C:.+]] = "nn.matmul"(%[[A]], %[[B]]) : (tensor<32x48xf32>, tensor<48x40xf32>) -> tensor<32x40xf32>
// CHECK: %[[R:.+]] = "nn.cast"(%[[C]]) : (tensor<32x40xf32>) -> tensor<32x40xbf16>
// CHECK: "nn.relu"(%[[R]])
func.func @matmul_bf16(%a: tensor<32x48xbf16>, %b: tensor<48x40xbf16>) -> tensor<32x40xbf16> {
  %0 = "nn.matmul"(%a, %b) : (tensor<32x48xbf16>, tensor<48x40xbf16>) -> tensor<32x40xbf16>
  %1 = "nn.relu"(%0) : (tensor<32x40xbf16>) -> tensor<32x40xbf16>
  return %1 : tensor<32x40xbf16>
}

// -----

// Attributes are kept.
// CHECK-LABEL: func.func @conv_f16
// CHECK: "nn.conv2d"(%{{.+}}, %{{.+}}) {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x9x9xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x5x5xf32>
// CHECK: "nn.cast"(%{{.+}}) : (tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf16>
func.func @conv_f16(%x: tensor<1x3x9x9xf16>, %w: tensor<4x3x3x3xf16>) -> tensor<1x4x5x5xf16> {
  %0 = "nn.conv2d"(%x, %w) {padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x9x9xf16>, tensor<4x3x3x3xf16>) -> tensor<1x4x5x5xf16>
  return %0 : tensor<1x4x5x5xf16>
}

// -----

// f32 contractions and elementwise ops are left alone.
// CHECK-LABEL: func.func @f32
// CHECK-NOT: nn.cast
// CHECK: "nn.matmul"(%arg0, %arg1) : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
func.func @f32(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> tensor<4x4xf32> {
  %0 = "nn.matmul"(%a, %b) : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
