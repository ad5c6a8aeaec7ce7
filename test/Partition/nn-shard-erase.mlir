// RUN: lamina-opt %s --nn-shard-erase | FileCheck %s

// CHECK-LABEL: func.func @main
// CHECK-NOT: shard.
// CHECK: "nn.matmul"(%arg0, %arg1)
shard.grid @g(shape = 2)
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %cols = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %a = shard.shard %w to %cols annotate_for_users : tensor<8x16xf32>
  %h = "nn.matmul"(%x, %a) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  return %h : tensor<4x16xf32>
}
