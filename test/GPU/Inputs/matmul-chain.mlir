// Two launches: the first kernel writes a result the second reads; a [1, N]
// bias seen as [N]; a residual; two results.
func.func @main(%a: tensor<64x96xf16>, %b: tensor<96x80xf16>, %bias: tensor<1x80xf16>, %c: tensor<80x32xf16>, %r: tensor<64x32xf16>) -> (tensor<64x32xf16>, tensor<64x80xf16>) {
  %0 = "nn.matmul"(%a, %b) : (tensor<64x96xf16>, tensor<96x80xf16>) -> tensor<64x80xf16>
  %1 = "nn.add"(%0, %bias) : (tensor<64x80xf16>, tensor<1x80xf16>) -> tensor<64x80xf16>
  %2 = "nn.matmul"(%1, %c) : (tensor<64x80xf16>, tensor<80x32xf16>) -> tensor<64x32xf16>
  %3 = "nn.add"(%2, %r) : (tensor<64x32xf16>, tensor<64x32xf16>) -> tensor<64x32xf16>
  return %3, %1 : tensor<64x32xf16>, tensor<64x80xf16>
}
