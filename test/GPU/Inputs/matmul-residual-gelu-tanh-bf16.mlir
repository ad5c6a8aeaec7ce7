// A bf16 matmul with a residual (M x N) add and gelu's tanh approximation.
func.func @main(%a: tensor<72x64xbf16>, %b: tensor<64x136xbf16>, %r: tensor<72x136xbf16>) -> tensor<72x136xbf16> {
  %0 = "nn.matmul"(%a, %b) : (tensor<72x64xbf16>, tensor<64x136xbf16>) -> tensor<72x136xbf16>
  %1 = "nn.add"(%0, %r) : (tensor<72x136xbf16>, tensor<72x136xbf16>) -> tensor<72x136xbf16>
  %2 = "nn.gelu"(%1) {approximate = "tanh"} : (tensor<72x136xbf16>) -> tensor<72x136xbf16>
  return %2 : tensor<72x136xbf16>
}
