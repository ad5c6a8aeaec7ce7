// Groups with several results: an elementwise group whose intermediate is
// also a result, and a reduction group giving its statistics and a row
// value (one kernel each).
func.func @main(%x: tensor<5x1x37xbf16>, %y: tensor<6x300xf32>) -> (tensor<5x1x37xbf16>, tensor<5x1x37xbf16>, tensor<6x1xf32>, tensor<6x300xf32>, tensor<6x1xf32>) {
  %a = "nn.exp"(%x) : (tensor<5x1x37xbf16>) -> tensor<5x1x37xbf16>
  %b = "nn.add"(%a, %x) : (tensor<5x1x37xbf16>, tensor<5x1x37xbf16>) -> tensor<5x1x37xbf16>
  %m = "nn.reduce_max"(%y) {axes = array<i64: 1>, keepdims = true} : (tensor<6x300xf32>) -> tensor<6x1xf32>
  %d = "nn.sub"(%y, %m) : (tensor<6x300xf32>, tensor<6x1xf32>) -> tensor<6x300xf32>
  %e = "nn.exp"(%d) : (tensor<6x300xf32>) -> tensor<6x300xf32>
  %s = "nn.reduce_sum"(%e) {axes = array<i64: 1>, keepdims = true} : (tensor<6x300xf32>) -> tensor<6x1xf32>
  return %a, %b, %m, %e, %s : tensor<5x1x37xbf16>, tensor<5x1x37xbf16>, tensor<6x1xf32>, tensor<6x300xf32>, tensor<6x1xf32>
}
