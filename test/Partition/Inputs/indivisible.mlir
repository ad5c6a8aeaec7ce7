// Rows split over a grid of 2: 7 rows do not divide.
shard.grid @g(shape = 2)
func.func @main(%x: tensor<7x4xf32>) -> tensor<7x4xf32> {
  %rows = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %rows annotate_for_users : tensor<7x4xf32>
  %e = "nn.exp"(%xs) : (tensor<7x4xf32>) -> tensor<7x4xf32>
  return %e : tensor<7x4xf32>
}
