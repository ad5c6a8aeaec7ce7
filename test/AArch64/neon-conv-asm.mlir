// The AArch64 assembly of a channels-last convolution's register tile on
// NEON: the innermost loop is 48 `fmla`, three into each of 16
// accumulators (8 output pixels x 8 channels as two 4-lane vectors), the
// loads of the input and filter and the loop's bookkeeping: no spill, no
// scalar code.
// RUN: lamina-compile %s --target=cpu:aarch64 --emit=asm | FileCheck %s

// CHECK-LABEL: _mlir_ciface_main:
// CHECK: This Inner Loop Header: Depth=5
// CHECK-NOT: sp
// CHECK-COUNT-48: {{^}}	{{(fmla	v[0-9]+\.4s, v[0-9]+\.4s, v[0-9]+\.s\[[0-3]\]|fmla	v[0-9]+\.4s, v[0-9]+\.4s, v[0-9]+\.4s)}}
// CHECK-NOT: {{^}}	{{(fmadd|fmul|str|stp|bl)}}
// CHECK: b.ne
func.func @main(%x: tensor<1x16x18x18xf32>, %w: tensor<32x16x3x3xf32>) -> tensor<1x32x16x16xf32> {
  %0 = "nn.conv2d"(%x, %w) : (tensor<1x16x18x18xf32>, tensor<32x16x3x3xf32>) -> tensor<1x32x16x16xf32>
  return %0 : tensor<1x32x16x16xf32>
}
