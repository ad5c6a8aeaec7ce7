// Attention over 4 heads split between 2 ranks (each rank attends with two
// heads), then a softmax over the feature axis split between them.
shard.grid @g(shape = 2)
func.func @main(%q: tensor<4x8x16xf32>, %k: tensor<4x8x16xf32>, %v: tensor<4x8x16xf32>)
    -> tensor<4x8x16xf32> {
  %heads = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %qs = shard.shard %q to %heads annotate_for_users : tensor<4x8x16xf32>
  %ks = shard.shard %k to %heads annotate_for_users : tensor<4x8x16xf32>
  %vs = shard.shard %v to %heads annotate_for_users : tensor<4x8x16xf32>
  %o = "nn.attention"(%qs, %ks, %vs) : (tensor<4x8x16xf32>, tensor<4x8x16xf32>, tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  return %o : tensor<4x8x16xf32>
}
