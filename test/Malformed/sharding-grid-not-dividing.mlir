// Malformed: a split axis that the grid's devices do not divide (lamina-run
// ran it in one process, the sharding unchecked).
// TOOL: lamina-run --random
// ERROR-LINE: 9
// ERROR: axis 0 of tensor<4x8xf32> has size 4, which the 3 devices of grid @g (axes [0]) do not divide
shard.grid @g(shape = 3)
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %a = shard.shard %x to %s annotate_for_users : tensor<4x8xf32>
  %r = "nn.relu"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
