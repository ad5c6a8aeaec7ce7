// An elementwise group whose results differ in shape: a kernel per shape.
func.func @main(%x: tensor<7x33xf32>, %b: tensor<33xf32>) -> (tensor<33xf32>, tensor<7x33xf32>) {
  %a = "nn.exp"(%b) : (tensor<33xf32>) -> tensor<33xf32>
  %c = "nn.add"(%x, %a) : (tensor<7x33xf32>, tensor<33xf32>) -> tensor<7x33xf32>
  return %a, %c : tensor<33xf32>, tensor<7x33xf32>
}
