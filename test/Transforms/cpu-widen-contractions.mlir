// RUN: lamina-opt %s --split-input-file --cpu-widen-contractions | FileCheck %s
// RUN: lamina-run %s --entry matmul_bf16 --random --check -q | FileCheck %s --check-prefix=RAN
// RUN: lamina-run %s --entry conv_f16 --random --check -q | FileCheck %s --check-prefix=RAN
// RUN: lamina-opt %s --split-input-file --cpu-widen-contractions='bf16-dot-products=1' | FileCheck %s --check-prefix=DOT

// f16 and bf16 contractions and convolutions become f32 ones on widened
// operands, their results rounded back; the program computes what it did
// (products accumulated in f32, rounded once), as the NumPy reference says.

// RAN: check: all results match the reference

// With bf16 dot products, bf16 contractions stay bf16.
// DOT-LABEL: func.func @matmul_bf16
// DOT-NOT: nn.cast
// DOT: "nn.matmul"(%arg0, %arg1) : (tensor<32x48xbf16>, tensor<48x40xbf16>) -> tensor<32x40xbf16>

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

// Attributes are kept; f16 is widened with bf16 dot products too.
// CHECK-LABEL: func.func @conv_f16
// DOT-LABEL: func.func @conv_f16
// DOT: "nn.conv2d"(%{{.+}}, %{{.+}}) {{.*}} -> tensor<1x4x5x5xf32>
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

// -----

// bf16 convolutions are widened with bf16 dot products too (their
// schedules compute in f32).
// CHECK-LABEL: func.func @conv_bf16
// DOT-LABEL: func.func @conv_bf16
// DOT: "nn.cast"(%arg0) : (tensor<1x3x9x9xbf16>) -> tensor<1x3x9x9xf32>
// DOT: "nn.conv2d"(%{{.+}}, %{{.+}}) : (tensor<1x3x9x9xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x7x7xf32>
func.func @conv_bf16(%x: tensor<1x3x9x9xbf16>, %w: tensor<4x3x3x3xbf16>) -> tensor<1x4x7x7xbf16> {
  %0 = "nn.conv2d"(%x, %w) : (tensor<1x3x9x9xbf16>, tensor<4x3x3x3xbf16>) -> tensor<1x4x7x7xbf16>
  return %0 : tensor<1x4x7x7xbf16>
}
