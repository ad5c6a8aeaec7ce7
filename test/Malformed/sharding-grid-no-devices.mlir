// Malformed: a grid of no devices (upstream's shard-partition dies of a
// division by zero on it).
// TOOL: lamina-compile --emit=linalg
// ERROR-LINE: 6
// ERROR: grid @g of shape [0] has no devices along an axis: a grid's sizes must be static and positive
shard.grid @g(shape = 0)
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %a = shard.shard %x to %s annotate_for_users : tensor<4x8xf32>
  %r = "nn.relu"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
