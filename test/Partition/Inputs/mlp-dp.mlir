// A data-parallel MLP on a grid of 2: the batch is split by rows, the
// weights are replicated, and no rank needs another's data.
shard.grid @g(shape = 2)
func.func @main(%x: tensor<8x16xf32>, %w1: tensor<16x32xf32>, %w2: tensor<32x16xf32>)
    -> tensor<8x16xf32> {
  %rows = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %rows annotate_for_users : tensor<8x16xf32>
  %h = "nn.matmul"(%xs, %w1) : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %a = "nn.relu"(%h) : (tensor<8x32xf32>) -> tensor<8x32xf32>
  %o = "nn.matmul"(%a, %w2) : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  %p = "nn.softmax"(%o) {axis = -1 : i64} : (tensor<8x16xf32>) -> tensor<8x16xf32>
  return %p : tensor<8x16xf32>
}
