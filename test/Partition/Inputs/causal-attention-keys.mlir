// Causal attention with the keys and values split along the sequence over
// 2 ranks: each rank scores its keys (the mask compares global positions),
// and the row maximum, the row sum and the output are all-reduced.
shard.grid @g(shape = 2)
func.func @main(%q: tensor<2x8x4xf32>, %k: tensor<2x8x4xf32>, %v: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %seq = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %ks = shard.shard %k to %seq annotate_for_users : tensor<2x8x4xf32>
  %vs = shard.shard %v to %seq annotate_for_users : tensor<2x8x4xf32>
  %o = "nn.attention"(%q, %ks, %vs) {causal = true} : (tensor<2x8x4xf32>, tensor<2x8x4xf32>, tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %o : tensor<2x8x4xf32>
}
