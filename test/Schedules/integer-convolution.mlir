// Integer convolutions (i8 x i8 and ui8 x i8 -> i32) on the CPU: exact
// against the NumPy reference through the convolution schedules (3x3 with
// padding, strided, grouped), and a 1x1 convolution of one image, which
// becomes a contraction, on vpdpbusd where the CPU has VNNI.
// REQUIRES: avx512vnni
// RUN: lamina-run %s --entry signed3x3 --random --check | FileCheck %s
// RUN: lamina-run %s --entry unsigned3x3 --random --check | FileCheck %s
// RUN: lamina-run %s --entry grouped --random --check | FileCheck %s
// RUN: lamina-run %s --entry pointwise --random --check | FileCheck %s
// RUN: lamina-run %s --entry unsigned_pointwise --random --check | FileCheck %s
// RUN: lamina-compile %s --target=cpu:sapphirerapids --emit=asm | FileCheck %s --check-prefix=ASM
// RUN: lamina-compile %s --target=cpu:sapphirerapids --emit=schedule | FileCheck %s --check-prefix=SCHEDULE

// CHECK: check: all results match the reference
// ASM: vpdpbusd %zmm{{[0-9]+}}, %zmm{{[0-9]+}}, %zmm{{[0-9]+}}
// SCHEDULE-DAG: transform.named_sequence @schedule_pointwise_{{.+}}_dot_product
// SCHEDULE-DAG: transform.named_sequence @schedule_unsigned_pointwise_{{.+}}_dot_product

func.func @signed3x3(%x: tensor<1x16x10x10xi8>, %w: tensor<24x16x3x3xi8>) -> tensor<1x24x10x10xi32> {
  %y = "nn.conv2d"(%x, %w) {padding = array<i64: 1, 1, 1, 1>} : (tensor<1x16x10x10xi8>, tensor<24x16x3x3xi8>) -> tensor<1x24x10x10xi32>
  return %y : tensor<1x24x10x10xi32>
}

// Padding of a ui8 input holds zeros (not the shifted activations' -128).
func.func @unsigned3x3(%x: tensor<2x8x9x9xui8>, %w: tensor<16x8x3x3xi8>) -> tensor<2x16x5x5xi32> {
  %y = "nn.conv2d"(%x, %w) {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<2x8x9x9xui8>, tensor<16x8x3x3xi8>) -> tensor<2x16x5x5xi32>
  return %y : tensor<2x16x5x5xi32>
}

func.func @grouped(%x: tensor<1x16x8x8xui8>, %w: tensor<16x1x3x3xi8>) -> tensor<1x16x8x8xi32> {
  %y = "nn.conv2d"(%x, %w) {padding = array<i64: 1, 1, 1, 1>, groups = 16 : i64} : (tensor<1x16x8x8xui8>, tensor<16x1x3x3xi8>) -> tensor<1x16x8x8xi32>
  return %y : tensor<1x16x8x8xi32>
}

func.func @pointwise(%x: tensor<1x64x14x14xi8>, %w: tensor<32x64x1x1xi8>) -> tensor<1x32x14x14xi32> {
  %y = "nn.conv2d"(%x, %w) : (tensor<1x64x14x14xi8>, tensor<32x64x1x1xi8>) -> tensor<1x32x14x14xi32>
  return %y : tensor<1x32x14x14xi32>
}

func.func @unsigned_pointwise(%x: tensor<1x64x12x12xui8>, %w: tensor<32x64x1x1xi8>) -> tensor<1x32x12x12xi32> {
  %y = "nn.conv2d"(%x, %w) : (tensor<1x64x12x12xui8>, tensor<32x64x1x1xi8>) -> tensor<1x32x12x12xi32>
  return %y : tensor<1x32x12x12xi32>
}
