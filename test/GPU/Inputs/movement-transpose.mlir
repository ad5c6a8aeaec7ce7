// Transposes: swaps of the last two dims through shared memory (f32, f16,
// bf16, i32; sizes no 32x32 tile divides, a batch with a dim of 1, a
// 1000x961 matrix of more tiles than the grid has blocks, so that blocks
// stride), and transposes that move only dims of 1 (views).
func.func @main(%a: tensor<70x45xf32>, %h: tensor<3x33x17xf16>, %b: tensor<2x1x5x64xbf16>, %i: tensor<40x40xi32>, %o: tensor<1x9xf32>, %s: tensor<5x1x7xf32>, %w: tensor<1000x961xf32>)
    -> (tensor<45x70xf32>, tensor<3x17x33xf16>, tensor<2x1x64x5xbf16>, tensor<40x40xi32>, tensor<9x1xf32>, tensor<1x5x7xf32>, tensor<961x1000xf32>) {
  %0 = "nn.transpose"(%a) {perm = array<i64: 1, 0>} : (tensor<70x45xf32>) -> tensor<45x70xf32>
  %1 = "nn.transpose"(%h) {perm = array<i64: 0, 2, 1>} : (tensor<3x33x17xf16>) -> tensor<3x17x33xf16>
  %2 = "nn.transpose"(%b) {perm = array<i64: 0, 1, 3, 2>} : (tensor<2x1x5x64xbf16>) -> tensor<2x1x64x5xbf16>
  %3 = "nn.transpose"(%i) {perm = array<i64: 1, 0>} : (tensor<40x40xi32>) -> tensor<40x40xi32>
  %4 = "nn.transpose"(%o) {perm = array<i64: 1, 0>} : (tensor<1x9xf32>) -> tensor<9x1xf32>
  %5 = "nn.transpose"(%s) {perm = array<i64: 1, 0, 2>} : (tensor<5x1x7xf32>) -> tensor<1x5x7xf32>
  %6 = "nn.transpose"(%w) {perm = array<i64: 1, 0>} : (tensor<1000x961xf32>) -> tensor<961x1000xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<45x70xf32>, tensor<3x17x33xf16>, tensor<2x1x64x5xbf16>, tensor<40x40xi32>, tensor<9x1xf32>, tensor<1x5x7xf32>, tensor<961x1000xf32>
}
