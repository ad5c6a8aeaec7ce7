func.func @main(%x: tensor<4x8xf32>, %w: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = "nn.matmul"(%x, %w) : (tensor<4x8xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}
