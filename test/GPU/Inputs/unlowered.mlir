// An nn program the cuda targets have no kernel for: a select of a boolean
// argument (kernels read and write floats).
func.func @main(%c: tensor<8xi1>, %x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %0 = "nn.select"(%c, %x, %y) : (tensor<8xi1>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
