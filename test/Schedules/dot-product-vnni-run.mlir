// The vpdpbusd path run on this CPU: results equal to the NumPy reference
// exactly, for shapes no tile divides (K not a multiple of 4, N of 16, M
// of 8) and for constant weights at the extreme values.
// REQUIRES: avx512vnni
// RUN: lamina-run %s --entry odd --random --check | FileCheck %s
// RUN: lamina-run %s --entry weights --random --check | FileCheck %s --check-prefix=WEIGHTS
// RUN: lamina-run %s --entry unsigned --random --check | FileCheck %s --check-prefix=UNSIGNED

// CHECK: check: all results match the reference
func.func @odd(%a: tensor<13x37xi8>, %b: tensor<37x50xi8>) -> tensor<13x50xi32> {
  %c = "nn.matmul"(%a, %b) : (tensor<13x37xi8>, tensor<37x50xi8>) -> tensor<13x50xi32>
  return %c : tensor<13x50xi32>
}

// Constant weights at i8's extremes (packed, and their column sums taken,
// when the program is compiled) times random activations.
// WEIGHTS: check: all results match the reference
func.func @weights(%a: tensor<9x300xi8>) -> tensor<9x2xi32> {
  %b = arith.constant dense<[[-128, 127]]> : tensor<1x2xi8>
  %bb = "nn.broadcast_to"(%b) : (tensor<1x2xi8>) -> tensor<300x2xi8>
  %c = "nn.matmul"(%a, %bb) : (tensor<9x300xi8>, tensor<300x2xi8>) -> tensor<9x2xi32>
  return %c : tensor<9x2xi32>
}

// Unsigned activations (vpdpbusd's own form, no shift) by signed weights.
// UNSIGNED: check: all results match the reference
func.func @unsigned(%a: tensor<13x37xui8>, %b: tensor<37x50xi8>) -> tensor<13x50xi32> {
  %c = "nn.matmul"(%a, %b) : (tensor<13x37xui8>, tensor<37x50xi8>) -> tensor<13x50xi32>
  return %c : tensor<13x50xi32>
}
