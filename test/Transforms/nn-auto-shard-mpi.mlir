// The sharding nn-auto-shard chooses runs on 2 MPI ranks and equals the
// run in one process: a Megatron MLP (small batch, large weights).
// REQUIRES: mpi
// RUN: lamina-opt %s --nn-auto-shard='grid=2' -o %t.mlir
// RUN: FileCheck %s --check-prefix=CHOICE --input-file=%t.mlir
// RUN: mpiexec -n 2 lamina-run %t.mlir --distributed --random --seed 1 --check -q | FileCheck %s

// CHOICE: lamina.sharding_strategy = "tensor-parallel"
// CHECK: check res0 (tensor<4x16xf32>): {{.*}}: ok
// CHECK: check: 2 ranks match the run in one process
func.func @mlp(%x: tensor<4x16xf32>, %w1: tensor<16x32xf32>, %b1: tensor<32xf32>, %w2: tensor<32x16xf32>) -> tensor<4x16xf32> {
  %h = "nn.matmul"(%x, %w1) : (tensor<4x16xf32>, tensor<16x32xf32>) -> tensor<4x32xf32>
  %hb = "nn.add"(%h, %b1) : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x32xf32>
  %r = "nn.gelu"(%hb) : (tensor<4x32xf32>) -> tensor<4x32xf32>
  %y = "nn.matmul"(%r, %w2) : (tensor<4x32xf32>, tensor<32x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
