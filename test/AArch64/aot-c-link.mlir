// An AArch64 object file from lamina-compile links into a C program with
// the cross compiler and runs under qemu-aarch64: the same C caller as on
// x86 (Tools/Inputs/aot_main.c), through `_mlir_ciface_main`. Code for
// AArch64 runs on one thread and needs no OpenMP runtime.
// REQUIRES: aarch64-run
// RUN: lamina-compile %s --target=cpu:aarch64 --emit=obj -o %t.o
// RUN: aarch64-linux-gnu-gcc -static %S/../Tools/Inputs/aot_main.c %t.o -lm -o %t.exe
// RUN: qemu-aarch64 -cpu max,sve=off %t.exe | FileCheck %s
// RUN: lamina-compile %s --target=cpu:aarch64 --emit=obj -o - | %PYTHON -c "import sys; d = sys.stdin.buffer.read(); print('machine', int.from_bytes(d[18:20], 'little'))" | FileCheck %s --check-prefix=ELF

// CHECK: row 0: probs
// CHECK: row 1: probs
// CHECK: max abs error {{.*}}: ok
// ELF: machine 183

func.func @main(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>, %b: tensor<4xf32>)
    -> (tensor<2x4xf32>, tensor<2xf32>) {
  %0 = "nn.matmul"(%x, %w) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %1 = "nn.add"(%0, %b) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %2 = "nn.softmax"(%1) {axis = 1 : i64} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %3 = "nn.relu"(%1) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %4 = "nn.reduce_sum"(%3) {axes = array<i64: 1>} : (tensor<2x4xf32>) -> tensor<2xf32>
  return %2, %4 : tensor<2x4xf32>, tensor<2xf32>
}
