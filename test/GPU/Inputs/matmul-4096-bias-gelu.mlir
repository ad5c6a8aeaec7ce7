func.func @main(%a: tensor<4096x4096xf16>, %b: tensor<4096x4096xf16>, %bias: tensor<4096xf16>) -> tensor<4096x4096xf16> {
  %0 = "nn.matmul"(%a, %b) : (tensor<4096x4096xf16>, tensor<4096x4096xf16>) -> tensor<4096x4096xf16>
  %1 = "nn.add"(%0, %bias) : (tensor<4096x4096xf16>, tensor<4096xf16>) -> tensor<4096x4096xf16>
  %2 = "nn.gelu"(%1) : (tensor<4096x4096xf16>) -> tensor<4096x4096xf16>
  return %2 : tensor<4096x4096xf16>
}
