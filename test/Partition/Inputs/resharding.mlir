// Explicit reshardings on a grid of 2, one collective each: rows -> columns
// (all-to-all), columns -> replicated (all-gather), a partial product
// wanted by rows (reduce-scatter).
shard.grid @g(shape = 2)
func.func @main(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %rows = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %cols = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %whole = shard.sharding @g split_axes = [[]] : !shard.sharding
  %xs = shard.shard %x to %rows annotate_for_users : tensor<8x8xf32>
  %e = "nn.exp"(%xs) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %e_rows = shard.shard %e to %rows : tensor<8x8xf32>
  %e_cols = shard.shard %e_rows to %cols annotate_for_users : tensor<8x8xf32>
  %t = "nn.tanh"(%e_cols) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %t_cols = shard.shard %t to %cols : tensor<8x8xf32>
  %t_whole = shard.shard %t_cols to %whole annotate_for_users : tensor<8x8xf32>
  %r = "nn.relu"(%t_whole) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %t_k = shard.shard %t_cols to %cols annotate_for_users : tensor<8x8xf32>
  %ws = shard.shard %w to %rows annotate_for_users : tensor<8x8xf32>
  %m = "nn.matmul"(%t_k, %ws) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %m_rows = shard.shard %m to %rows annotate_for_users : tensor<8x8xf32>
  %s = "nn.sigmoid"(%m_rows) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r, %s : tensor<8x8xf32>, tensor<8x8xf32>
}
