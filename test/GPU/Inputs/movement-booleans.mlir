// Booleans across kernel boundaries: a comparison's i1 result transposed
// and selected on, an i1 program input and i1 program outputs (bytes in
// global memory on the GPU).
func.func @main(%x: tensor<4x7xf32>, %y: tensor<4x7xf32>, %c: tensor<7x4xi1>) -> (tensor<7x4xf32>, tensor<7x4xi1>, tensor<4x7xi1>) {
  %m = "nn.compare"(%x, %y) {predicate = "lt"} : (tensor<4x7xf32>, tensor<4x7xf32>) -> tensor<4x7xi1>
  %t = "nn.transpose"(%m) {perm = array<i64: 1, 0>} : (tensor<4x7xi1>) -> tensor<7x4xi1>
  %xt = "nn.transpose"(%x) {perm = array<i64: 1, 0>} : (tensor<4x7xf32>) -> tensor<7x4xf32>
  %yt = "nn.transpose"(%y) {perm = array<i64: 1, 0>} : (tensor<4x7xf32>) -> tensor<7x4xf32>
  %s = "nn.select"(%t, %xt, %yt) : (tensor<7x4xi1>, tensor<7x4xf32>, tensor<7x4xf32>) -> tensor<7x4xf32>
  %n = "nn.transpose"(%c) {perm = array<i64: 1, 0>} : (tensor<7x4xi1>) -> tensor<4x7xi1>
  return %s, %t, %n : tensor<7x4xf32>, tensor<7x4xi1>, tensor<4x7xi1>
}
