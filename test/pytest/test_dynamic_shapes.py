"""Programs with '?' dims: compiled once by lamina.compile, run at many
sizes against NumPy, and calls whose sizes break the program's rules
rejected with an error naming the op (never a wrong result or a crash).
The shape rules are tested without compiling."""

import numpy as np
import pytest

import lamina
from lamina.dialects import nn
from lamina.shapes import ShapeError, ShapeFunction, argument_shapes, parse_dims
from lamina.runtime import find_entry
from lamina.types import RuntimeDim, TensorType, VerifyError

SIZES = (1, 2, 17, 37, 128, 129)

MLP = """
func.func @main(%x: tensor<?x256xf32> {nn.dims = ["S"]}, %w1: tensor<256x512xf32>,
                %b1: tensor<512xf32>, %w2: tensor<512x256xf32>) -> tensor<?x256xf32> {
  %h = "nn.matmul"(%x, %w1) : (tensor<?x256xf32>, tensor<256x512xf32>) -> tensor<?x512xf32>
  %hb = "nn.add"(%h, %b1) : (tensor<?x512xf32>, tensor<512xf32>) -> tensor<?x512xf32>
  %g = "nn.gelu"(%hb) : (tensor<?x512xf32>) -> tensor<?x512xf32>
  %y = "nn.matmul"(%g, %w2) : (tensor<?x512xf32>, tensor<512x256xf32>) -> tensor<?x256xf32>
  return %y : tensor<?x256xf32>
}
"""

ROWS = """
func.func @main(%x: tensor<?x?x768xf32> {nn.dims = ["B", "S"]}, %g: tensor<768xf32>,
                %b: tensor<768xf32>) -> (tensor<?x?x768xf32>, tensor<?x12x?x64xf32>) {
  %n = "nn.layer_norm"(%x, %g, %b) {epsilon = 1.0e-05 : f32}
      : (tensor<?x?x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
  %s = "nn.softmax"(%n) {axis = -1 : i64} : (tensor<?x?x768xf32>) -> tensor<?x?x768xf32>
  %r = "nn.reshape"(%s) : (tensor<?x?x768xf32>) -> tensor<?x?x12x64xf32>
  %t = "nn.transpose"(%r) {perm = array<i64: 0, 2, 1, 3>}
      : (tensor<?x?x12x64xf32>) -> tensor<?x12x?x64xf32>
  return %n, %t : tensor<?x?x768xf32>, tensor<?x12x?x64xf32>
}
"""

PAIR = """
func.func @main(%a: tensor<?x8xf32> {nn.dims = ["N"]}, %b: tensor<?x8xf32> {nn.dims = ["M"]})
    -> tensor<?x8xf32> {
  %0 = "nn.add"(%a, %b) : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}
"""


def gelu(x):
    from math import erf
    return 0.5 * x * (1.0 + np.vectorize(erf)(x / np.sqrt(2.0)))


def layer_norm(x, g, b):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * g + b


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


@pytest.fixture(scope="module")
def mlp():
    return lamina.compile(lamina.parse(MLP))


@pytest.fixture(scope="module")
def rows():
    return lamina.compile(lamina.parse(ROWS))


def test_mlp_compiled_once_runs_at_every_size(mlp):
    rng = np.random.default_rng(0)
    w1 = (rng.standard_normal((256, 512)) / 16).astype(np.float32)
    b1 = rng.standard_normal(512).astype(np.float32)
    w2 = (rng.standard_normal((512, 256)) / 22).astype(np.float32)
    for rows in SIZES:
        x = rng.standard_normal((rows, 256)).astype(np.float32)
        y = mlp(x, w1, b1, w2)
        h = x.astype(np.float64) @ w1 + b1
        expected = gelu(h) @ w2
        assert y.shape == (rows, 256)
        np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-4)


def test_rows_compiled_once_run_at_every_size(rows):
    rng = np.random.default_rng(1)
    g = rng.standard_normal(768).astype(np.float32)
    b = rng.standard_normal(768).astype(np.float32)
    for batch, sequence in [(1, s) for s in SIZES] + [(2, 17), (3, 5)]:
        x = rng.standard_normal((batch, sequence, 768)).astype(np.float32)
        normalised, heads = rows(x, g, b)
        expected = layer_norm(x.astype(np.float64), g, b)
        np.testing.assert_allclose(normalised, expected, rtol=1e-4, atol=1e-4)
        probabilities = softmax(expected).reshape(batch, sequence, 12, 64).transpose(0, 2, 1, 3)
        assert heads.shape == (batch, 12, sequence, 64)
        np.testing.assert_allclose(heads, probabilities, rtol=1e-4, atol=1e-6)


def test_sizes_that_break_the_rules_are_errors(mlp):
    rng = np.random.default_rng(2)
    w1 = rng.standard_normal((256, 512)).astype(np.float32)
    b1 = rng.standard_normal(512).astype(np.float32)
    w2 = rng.standard_normal((512, 256)).astype(np.float32)
    with pytest.raises(ValueError, match=r"argument #0: expected tensor<\?x256xf32> "
                                         r"\(shape \(\?, 256\)\), got shape \(4, 255\)"):
        mlp(np.zeros((4, 255), np.float32), w1, b1, w2)
    pair = lamina.compile(lamina.parse(PAIR))
    a = np.ones((5, 8), np.float32)
    np.testing.assert_array_equal(pair(a, a), a + a)
    # A '?' dim of size 1 does not broadcast: the compiled code reads every row.
    for other in (3, 1):
        with pytest.raises(ShapeError, match=r"'nn.add' op dim 0 of the broadcast differs at "
                                             rf"run time: (5 vs {other}|{other} vs 5)"):
            pair(a, np.ones((other, 8), np.float32))


def test_dims_named_alike_must_be_equal():
    module = lamina.parse(PAIR.replace('["M"]', '["N"]'))
    shapes = ShapeFunction(module, find_entry(module))
    assert shapes([(3, 8), (3, 8)]) == [(3, 8)]
    with pytest.raises(ShapeError, match="dim 'N' is 3 in argument #0 and 4 in argument #1"):
        shapes([(3, 8), (4, 8)])


def test_reference_evaluates_at_the_inputs_sizes():
    from lamina import reference
    module = lamina.parse(ROWS)
    x = np.random.default_rng(3).standard_normal((2, 3, 768)).astype(np.float32)
    ones, zeros = np.ones(768, np.float32), np.zeros(768, np.float32)
    normalised, heads = reference.evaluate(module, [x, ones, zeros])
    assert normalised.shape == (2, 3, 768) and heads.shape == (2, 12, 3, 64)


def test_broadcast_rule_with_dynamic_dims():
    assert nn.broadcast_shapes((None, 4), (4,)) == (None, 4)
    assert nn.broadcast_shapes((None, 4), (8, 4)) == (8, 4)
    assert nn.broadcast_shapes((None, 1), (None, 4)) == (None, 4)
    assert nn.broadcast_shapes((None,), (None,)) == (None,)
    with pytest.raises(VerifyError, match="not broadcast-compatible: \\?x4 vs \\?x5"):
        nn.broadcast_shapes((None, 4), (None, 5))
    assert nn.broadcast_shapes((RuntimeDim(5), 4), (5, 4)) == (5, 4)
    with pytest.raises(VerifyError, match="does not broadcast"):
        nn.broadcast_shapes((RuntimeDim(1), 4), (5, 4))


def test_matmul_rule_with_dynamic_dims():
    matmul = nn.MatmulOp.detached()
    lhs, rhs = TensorType((None, 12, None, 64), "f32"), TensorType((None, 12, 64, None), "f32")
    assert matmul.infer_type(lhs, rhs) == TensorType((None, 12, None, None), "f32")
    assert matmul.infer_type(TensorType((None, None), "f32"),
                             TensorType((256, 8), "f32")) == TensorType((None, 8), "f32")
    with pytest.raises(VerifyError, match="contraction dims differ: 256 vs 128"):
        matmul.infer_type(TensorType((None, 256), "f32"), TensorType((128, 8), "f32"))


def test_argument_shapes_from_dims():
    module = lamina.parse(ROWS)
    func = find_entry(module)
    assert parse_dims("B=2, S=37") == {"B": 2, "S": 37}
    assert argument_shapes(func, {"B": 2, "S": 37}) == [(2, 37, 768), (768,), (768,)]
    with pytest.raises(ValueError, match="dim 'S' is '\\?': give its size with --dims S=SIZE"):
        argument_shapes(func, {"B": 2})
    with pytest.raises(ValueError, match="--dims names T, which no '\\?' dim of @main has"):
        argument_shapes(func, {"B": 2, "S": 3, "T": 4})
    with pytest.raises(ValueError, match="expected NAME=SIZE"):
        parse_dims("B:2")
    unnamed = lamina.parse(ROWS.replace(' {nn.dims = ["B", "S"]}', ""))
    assert argument_shapes(find_entry(unnamed), {"0:0": 1, "0:1": 5})[0] == (1, 5, 768)


def test_weights_bind_once_for_every_size(mlp):
    rng = np.random.default_rng(4)
    w1 = (rng.standard_normal((256, 512)) / 16).astype(np.float32)
    b1 = rng.standard_normal(512).astype(np.float32)
    w2 = (rng.standard_normal((512, 256)) / 22).astype(np.float32)
    bound = mlp.bind({1: w1, 2: b1, 3: w2})
    for rows in (1, 17, 129):
        x = rng.standard_normal((rows, 256)).astype(np.float32)
        np.testing.assert_allclose(bound(x), mlp(x, w1, b1, w2), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="expected tensor<\\?x256xf32>"):
        mlp.bind({0: np.zeros((3, 256), np.float32)})


def test_matmul_with_dynamic_contraction_and_columns():
    # '?' n and k take the loop nests (packing wants static panels).
    program = lamina.compile(lamina.parse("""
func.func @main(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %0 = "nn.matmul"(%a, %b) : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %0 : tensor<?x?xf32>
}
"""))
    rng = np.random.default_rng(5)
    for m, k, n in ((1, 1, 1), (17, 33, 65), (64, 256, 96)):
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        np.testing.assert_allclose(program(a, b), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
    with pytest.raises(ShapeError, match="'nn.matmul' op matmul contraction dims differ: 8 vs 9"):
        program(np.ones((4, 8), np.float32), np.ones((9, 3), np.float32))
