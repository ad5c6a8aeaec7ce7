// Malformed: a sharding of more axes than the tensor has (upstream's
// shard-partition aborts on it).
// TOOL: lamina-compile --emit=linalg
// ERROR-LINE: 9
// ERROR: sharding splits 3 axes of tensor<4x8xf32>, which has 2 (split_axes [[], [], [0]])
shard.grid @g(shape = 2)
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = shard.sharding @g split_axes = [[], [], [0]] : !shard.sharding
  %a = shard.shard %x to %s annotate_for_users : tensor<4x8xf32>
  %r = "nn.relu"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}
