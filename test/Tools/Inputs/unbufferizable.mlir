shard.grid @grid(shape = 2)
func.func @main(%a: tensor<8xf32>) -> tensor<8xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %b = shard.shard %a to %s : tensor<8xf32>
  %r = "nn.relu"(%b) : (tensor<8xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}
