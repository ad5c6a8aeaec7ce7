"""The GPU's data-movement kernels on inputs `lamina-run --random` does not
draw, emulated (cuda:sm_80) against the nn references, exactly: gather
indices outside the table (clamped), argmaxes of ties, NaNs and
infinities, prefix sums through NaN, and booleans in and out."""

import numpy as np

from lamina.parsing import parse
from lamina.reference import evaluate
from lamina.targets.cuda import CUDATarget

PROGRAM = """func.func @main(%t: tensor<10x3xf32>, %i: tensor<2x3xi32>, %x: tensor<4x5xf32>, %m: tensor<4x5xi1>) -> (tensor<2x3x3xf32>, tensor<4xi64>, tensor<4x5xf32>, tensor<5x4xi1>, tensor<4x1xi64>) {
  %0 = "nn.gather"(%t, %i) {axis = 0 : i64} : (tensor<10x3xf32>, tensor<2x3xi32>) -> tensor<2x3x3xf32>
  %1 = "nn.argmax"(%x) {axis = 1 : i64} : (tensor<4x5xf32>) -> tensor<4xi64>
  %2 = "nn.cumsum"(%x) {axis = 1 : i64} : (tensor<4x5xf32>) -> tensor<4x5xf32>
  %3 = "nn.transpose"(%m) {perm = array<i64: 1, 0>} : (tensor<4x5xi1>) -> tensor<5x4xi1>
  %c = "nn.cast"(%m) : (tensor<4x5xi1>) -> tensor<4x5xi64>
  %4 = "nn.argmax"(%c) {axis = 1 : i64, keepdims = true} : (tensor<4x5xi64>) -> tensor<4x1xi64>
  return %0, %1, %2, %3, %4 : tensor<2x3x3xf32>, tensor<4xi64>, tensor<4x5xf32>, tensor<5x4xi1>, tensor<4x1xi64>
}"""


def test_edge_values_match_the_references_exactly():
    table = np.arange(30, dtype=np.float32).reshape(10, 3)
    indices = np.array([[-3, 0, 9], [10, 5000, 4]], np.int32)
    x = np.array([[1, 3, 3, 0, 2], [np.nan, 1, np.nan, 5, 5], [-np.inf, -np.inf, -1, -1, -7],
                  [2, 2, 2, 2, np.nan]], np.float32)
    mask = np.array([[0, 1, 1, 0, 0], [0, 0, 0, 0, 0], [1, 1, 1, 1, 1], [0, 0, 0, 0, 1]], bool)
    arguments = [table, indices, x, mask]
    expected = evaluate(parse(PROGRAM), arguments)
    emulated = CUDATarget("sm_80").emulation().compile(parse(PROGRAM))(*arguments)
    for want, got in zip(expected, emulated):
        assert got.dtype == want.dtype and got.shape == want.shape
        assert np.array_equal(got, want, equal_nan=True), (got, want)
    assert list(emulated[1]) == [1, 0, 2, 4]           # first of ties, first NaN
    assert emulated[0][1, 1].tolist() == [27, 28, 29]  # index 5000 reads the last row
