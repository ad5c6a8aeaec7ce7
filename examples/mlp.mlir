// A two-layer perceptron classifying a batch of 8 feature vectors:
// softmax(gelu(x W1 + b1) W2 + b2).
//
//   lamina-run examples/mlp.mlir --random --check
//   lamina-compile examples/mlp.mlir --emit=linalg

func.func @main(%x: tensor<8x64xf32>, %w1: tensor<64x128xf32>, %b1: tensor<128xf32>,
                %w2: tensor<128x10xf32>, %b2: tensor<10xf32>) -> tensor<8x10xf32> {
  %h = "nn.matmul"(%x, %w1) : (tensor<8x64xf32>, tensor<64x128xf32>) -> tensor<8x128xf32>
  %hb = "nn.add"(%h, %b1) : (tensor<8x128xf32>, tensor<128xf32>) -> tensor<8x128xf32>
  %a = "nn.gelu"(%hb) : (tensor<8x128xf32>) -> tensor<8x128xf32>
  %o = "nn.matmul"(%a, %w2) : (tensor<8x128xf32>, tensor<128x10xf32>) -> tensor<8x10xf32>
  %ob = "nn.add"(%o, %b2) : (tensor<8x10xf32>, tensor<10xf32>) -> tensor<8x10xf32>
  %p = "nn.softmax"(%ob) {axis = -1 : i64} : (tensor<8x10xf32>) -> tensor<8x10xf32>
  return %p : tensor<8x10xf32>
}
