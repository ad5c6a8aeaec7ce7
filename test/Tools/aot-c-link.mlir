// An object file from lamina-compile links into a C program, which calls
// the kernel through its C interface `_mlir_ciface_main` (memref
// descriptors; results are out-parameters allocated by the caller).
// REQUIRES: cc
// One thread: the object needs no OpenMP runtime.
// RUN: lamina-compile %s --target=cpu:threads=1 --emit=obj -o %t.o
// RUN: cc %S/Inputs/aot_main.c %t.o -lm -o %t.exe
// RUN: %t.exe | FileCheck %s

// CHECK: row 0: probs
// CHECK: row 1: probs
// CHECK: max abs error {{.*}}: ok

func.func @main(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>, %b: tensor<4xf32>)
    -> (tensor<2x4xf32>, tensor<2xf32>) {
  %0 = "nn.matmul"(%x, %w) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %1 = "nn.add"(%0, %b) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %2 = "nn.softmax"(%1) {axis = 1 : i64} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %3 = "nn.relu"(%1) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %4 = "nn.reduce_sum"(%3) {axes = array<i64: 1>} : (tensor<2x4xf32>) -> tensor<2xf32>
  return %2, %4 : tensor<2x4xf32>, tensor<2xf32>
}
