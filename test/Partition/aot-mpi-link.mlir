// An object file of one rank's partition links with MPI into a C program
// that mpiexec runs on 2 ranks (rank 0 checks the result, tolerance 1e-4).
// REQUIRES: mpi, cc
// RUN: lamina-compile %s --target=cpu:threads=1 --emit=obj -o %t.o
// RUN: mpicc %S/Inputs/mpi_main.c %t.o -lm -o %t.exe
// RUN: mpiexec -n 2 %t.exe | FileCheck %s

// CHECK: 2 ranks: max abs error {{.*}}: ok

shard.grid @g(shape = 2)
func.func @main(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32>, %w2: tensor<16x8xf32>) -> tensor<4x8xf32> {
  %cols = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %rows = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %a = shard.shard %w1 to %cols annotate_for_users : tensor<8x16xf32>
  %b = shard.shard %w2 to %rows annotate_for_users : tensor<16x8xf32>
  %h = "nn.matmul"(%x, %a) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %r = "nn.relu"(%h) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = "nn.matmul"(%r, %b) : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
