// A small convolutional classifier for a 3x16x16 image: two convolutions
// with ReLU and pooling, then a linear layer and a softmax over 10 classes.
//
//   lamina-run examples/convnet.mlir --random --check

func.func @main(%image: tensor<1x3x16x16xf32>,
                %w1: tensor<8x3x3x3xf32>, %b1: tensor<8xf32>,
                %w2: tensor<16x8x3x3xf32>, %b2: tensor<16xf32>,
                %wf: tensor<144x10xf32>, %bf: tensor<10xf32>) -> tensor<1x10xf32> {
  %c1 = "nn.conv2d"(%image, %w1, %b1) {padding = array<i64: 1, 1, 1, 1>}
      : (tensor<1x3x16x16xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<1x8x16x16xf32>
  %r1 = "nn.relu"(%c1) : (tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
  %p1 = "nn.max_pool2d"(%r1) {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>}
      : (tensor<1x8x16x16xf32>) -> tensor<1x8x8x8xf32>
  %c2 = "nn.conv2d"(%p1, %w2, %b2)
      : (tensor<1x8x8x8xf32>, tensor<16x8x3x3xf32>, tensor<16xf32>) -> tensor<1x16x6x6xf32>
  %r2 = "nn.relu"(%c2) : (tensor<1x16x6x6xf32>) -> tensor<1x16x6x6xf32>
  %p2 = "nn.avg_pool2d"(%r2) {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>}
      : (tensor<1x16x6x6xf32>) -> tensor<1x16x3x3xf32>
  %flat = "nn.reshape"(%p2) : (tensor<1x16x3x3xf32>) -> tensor<1x144xf32>
  %logits = "nn.matmul"(%flat, %wf) : (tensor<1x144xf32>, tensor<144x10xf32>) -> tensor<1x10xf32>
  %biased = "nn.add"(%logits, %bf) : (tensor<1x10xf32>, tensor<10xf32>) -> tensor<1x10xf32>
  %probs = "nn.softmax"(%biased) {axis = -1 : i64} : (tensor<1x10xf32>) -> tensor<1x10xf32>
  return %probs : tensor<1x10xf32>
}
