// A Megatron-style MLP on a grid of 2: W1 split by columns, W2 by rows, so
// each rank computes half of the hidden layer and one all-reduce sums the
// partial outputs.
shard.grid @g(shape = 2)
func.func @main(%x: tensor<8x16xf32>, %w1: tensor<16x32xf32>, %b1: tensor<32xf32>,
                %w2: tensor<32x16xf32>) -> tensor<8x16xf32> {
  %cols = shard.sharding @g split_axes = [[], [0]] : !shard.sharding
  %rows = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %w1s = shard.shard %w1 to %cols annotate_for_users : tensor<16x32xf32>
  %b1s = shard.shard %b1 to %rows annotate_for_users : tensor<32xf32>
  %w2s = shard.shard %w2 to %rows annotate_for_users : tensor<32x16xf32>
  %h = "nn.matmul"(%x, %w1s) : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %hb = "nn.add"(%h, %b1s) : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %a = "nn.gelu"(%hb) : (tensor<8x32xf32>) -> tensor<8x32xf32>
  %o = "nn.matmul"(%a, %w2s) : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
  return %o : tensor<8x16xf32>
}
