// A small CNN head with its batch split over a grid of 2: a padded
// convolution, the feature maps flattened (nn.reshape) and a classifier.
// Every op runs on the local batch; no rank needs another's data.
shard.grid @g(shape = 2)
func.func @main(%x: tensor<4x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %fc: tensor<256x10xf32>) -> tensor<4x10xf32> {
  %batch = shard.sharding @g split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %batch annotate_for_users : tensor<4x3x8x8xf32>
  %c = "nn.conv2d"(%xs, %w) {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>} : (tensor<4x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<4x4x8x8xf32>
  %r = "nn.relu"(%c) : (tensor<4x4x8x8xf32>) -> tensor<4x4x8x8xf32>
  %f = "nn.reshape"(%r) : (tensor<4x4x8x8xf32>) -> tensor<4x256xf32>
  %y = "nn.matmul"(%f, %fc) : (tensor<4x256xf32>, tensor<256x10xf32>) -> tensor<4x10xf32>
  return %y : tensor<4x10xf32>
}
