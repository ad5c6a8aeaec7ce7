func.func @main(%a: tensor<8x256xf32>, %b: tensor<256x8xf32>) -> tensor<8x8xf32> {
  %0 = "nn.matmul"(%a, %b) : (tensor<8x256xf32>, tensor<256x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
