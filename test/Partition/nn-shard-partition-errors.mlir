// RUN: lamina-opt %s --split-input-file --verify-diagnostics --nn-shard-partition

shard.grid @g(shape = 2)
func.func @indivisible(%x: tensor<5x8xf32>) -> tensor<5x8xf32> {
  %rows = shard.sharding @g split_axes = [[0]] : !shard.sharding
  // expected-error @+1 {{axis 0 of tensor<5x8xf32> has size 5, which the 2 devices of grid @g (axes [0]) do not divide}}
  %a = shard.shard %x to %rows annotate_for_users : tensor<5x8xf32>
  %e = "nn.exp"(%a) : (tensor<5x8xf32>) -> tensor<5x8xf32>
  return %e : tensor<5x8xf32>
}
