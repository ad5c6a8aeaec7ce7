// tensor.gather has no bufferization: one-shot-bufferize fails at it.
func.func @main(%a: tensor<8xf32>, %i: tensor<2x1xindex>) -> tensor<2xf32> {
  %r = "nn.relu"(%a) : (tensor<8xf32>) -> tensor<8xf32>
  %g = tensor.gather %r[%i] gather_dims([0]) unique : (tensor<8xf32>, tensor<2x1xindex>) -> tensor<2xf32>
  return %g : tensor<2xf32>
}
