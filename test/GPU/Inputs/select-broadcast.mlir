// A comparison and a select broadcasting over dims of 1 (i1 register tiles
// inside the kernel).
func.func @main(%x: tensor<3x1x50xf16>, %y: tensor<4x1xf16>) -> tensor<3x4x50xf16> {
  %c = "nn.compare"(%x, %y) {predicate = "lt"} : (tensor<3x1x50xf16>, tensor<4x1xf16>) -> tensor<3x4x50xi1>
  %m = "nn.maximum"(%x, %y) : (tensor<3x1x50xf16>, tensor<4x1xf16>) -> tensor<3x4x50xf16>
  %n = "nn.neg"(%x) : (tensor<3x1x50xf16>) -> tensor<3x1x50xf16>
  %s = "nn.select"(%c, %m, %n) : (tensor<3x4x50xi1>, tensor<3x4x50xf16>, tensor<3x1x50xf16>) -> tensor<3x4x50xf16>
  return %s : tensor<3x4x50xf16>
}
