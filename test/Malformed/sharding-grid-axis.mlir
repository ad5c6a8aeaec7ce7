// Malformed: a split over a grid axis the grid does not have.
// TOOL: lamina-run --random
// ERROR-LINE: 7
// ERROR: split axis 1 is not an axis of grid @g of shape [2]
shard.grid @g(shape = 2)
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = shard.sharding @g split_axes = [[1]] : !shard.sharding
  %a = shard.shard %x to %s annotate_for_users : tensor<4x8xf32>
  %r = "nn.relu"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
