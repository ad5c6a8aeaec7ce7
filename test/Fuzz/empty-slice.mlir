// Empty slices, from the end of an axis and of a 0-sized operand (found by
// lamina-fuzz's degenerate programs, issue 20's empty-slice defect):
// convert-nn-to-linalg built a tensor.extract_slice whose offset upstream's
// verifier rejected ("offset 1 is out-of-bounds: 8 >= 8": dim 1 starts
// at its end). An empty slice is an empty tensor.
// RUN: lamina-run %s --random --seed 0 --check -q
func.func @main(%x: tensor<4x8xf32>, %e: tensor<8x0xf32>) -> (tensor<4x0xf32>, tensor<5x0xf32>) {
  %0 = "nn.slice"(%x) {starts = array<i64: 0, 8>, limits = array<i64: 4, 8>} : (tensor<4x8xf32>) -> tensor<4x0xf32>
  %1 = "nn.slice"(%e) {starts = array<i64: 3, 0>, limits = array<i64: 8, 0>, strides = array<i64: 1, 2>} : (tensor<8x0xf32>) -> tensor<5x0xf32>
  return %0, %1 : tensor<4x0xf32>, tensor<5x0xf32>
}
