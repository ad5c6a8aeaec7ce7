func.func @main(%a: tensor<2048x2048xf32>, %b: tensor<2048x2048xf32>, %w: tensor<2048x2048xf16>, %x: tensor<2048x2048xf16>, %bias: tensor<2048xf32>)
    -> (tensor<2048x2048xf32>, tensor<2048x2048xf32>, tensor<2048x2048xf16>, tensor<2048x2048xf32>) {
  %m0 = "nn.matmul"(%a, %b) : (tensor<2048x2048xf32>, tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  %s0 = "nn.add"(%m0, %bias) : (tensor<2048x2048xf32>, tensor<2048xf32>) -> tensor<2048x2048xf32>
  %o0 = "nn.gelu"(%s0) : (tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  %o1 = "nn.matmul"(%a, %b) {precision = "tf32"} : (tensor<2048x2048xf32>, tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  %tw = "nn.transpose"(%w) {perm = array<i64: 1, 0>} : (tensor<2048x2048xf16>) -> tensor<2048x2048xf16>
  %tx = "nn.transpose"(%x) {perm = array<i64: 1, 0>} : (tensor<2048x2048xf16>) -> tensor<2048x2048xf16>
  %o2 = "nn.matmul"(%tx, %tw) : (tensor<2048x2048xf16>, tensor<2048x2048xf16>) -> tensor<2048x2048xf16>
  %ta = "nn.transpose"(%a) {perm = array<i64: 1, 0>} : (tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  %tb = "nn.transpose"(%b) {perm = array<i64: 1, 0>} : (tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  %o3 = "nn.matmul"(%ta, %tb) : (tensor<2048x2048xf32>, tensor<2048x2048xf32>) -> tensor<2048x2048xf32>
  return %o0, %o1, %o2, %o3 : tensor<2048x2048xf32>, tensor<2048x2048xf32>, tensor<2048x2048xf16>, tensor<2048x2048xf32>
}
