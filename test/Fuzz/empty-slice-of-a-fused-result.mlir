// An empty slice of the result of fusion groups (program 171 of the fixed
// corpus, seed 1): the slice became an empty tensor, but the groups it read
// were still lowered, their results unused; later passes removed part of
// them and the CPU schedule failed ("requires exactly one target handle").
// convert-nn-to-linalg now erases nn ops, fusion groups' calls included,
// whose results nothing uses once the empty results are replaced.
// RUN: lamina-run %s --random --seed 0 --check -q
func.func @main(%arg2: tensor<13x1x4x13xf16>, %arg3: tensor<1x1x1x1xf16>, %arg4: tensor<1xf16>, %arg6: tensor<13x1x4x13xf16>) -> (tensor<2x0x2x1xf16>) {
  %v5 = "nn.conv2d"(%arg2, %arg3, %arg4) : (tensor<13x1x4x13xf16>, tensor<1x1x1x1xf16>, tensor<1xf16>) -> tensor<13x1x4x13xf16>
  %v7 = "nn.rms_norm"(%v5, %arg6) {axis = -4 : i64, epsilon = 0.1 : f32} : (tensor<13x1x4x13xf16>, tensor<13x1x4x13xf16>) -> tensor<13x1x4x13xf16>
  %v8 = "nn.slice"(%v7) {limits = array<i64: 6, 1, 2, 6>, starts = array<i64: 0, 1, 0, 3>, strides = array<i64: 3, 3, 1, 3>} : (tensor<13x1x4x13xf16>) -> tensor<2x0x2x1xf16>
  return %v8 : tensor<2x0x2x1xf16>
}
