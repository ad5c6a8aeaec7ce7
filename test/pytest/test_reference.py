"""The NumPy reference interpreter of nn programs and result comparison."""

import ml_dtypes
import numpy as np
import pytest

import lamina
from lamina.diagnostics import CompileError
from lamina.dialects.opdef import TensorType
from lamina.reference import compare, evaluate, random_inputs, tolerance

PROGRAM = """
func.func private @affine(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %b = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %0 = "nn.matmul"(%x, %w) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %1 = "nn.add"(%0, %b) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %1 : tensor<2x4xf32>
}
func.func @main(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>) -> (tensor<2x4xf32>, tensor<2xf32>) {
  %0 = func.call @affine(%x, %w) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %1 = "nn.relu"(%0) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %2 = "nn.reduce_sum"(%1) {axes = array<i64: 1>} : (tensor<2x4xf32>) -> tensor<2xf32>
  return %1, %2 : tensor<2x4xf32>, tensor<2xf32>
}
"""


def test_program_with_calls_and_constants():
    module = lamina.parse(PROGRAM)
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 3
    w = np.ones((3, 4), np.float32)
    relu, total = evaluate(module, [x, w])
    expected = np.maximum(x @ w + np.array([1, 2, 3, 4], np.float32), 0)
    np.testing.assert_array_equal(relu, expected)
    np.testing.assert_array_equal(total, expected.sum(1))
    assert relu.dtype == np.float32 and total.shape == (2,)


def test_agrees_with_compiled_code():
    module = lamina.parse(PROGRAM)
    compiled = lamina.compile(module)
    args = random_inputs(compiled.inputs, seed=4)
    for actual, expected in zip(compiled(*args), evaluate(module, args)):
        assert compare(actual, expected).ok


@pytest.mark.parametrize("dtype,literal", [
    ("bf16", "[1.5, -2.0, 0x7FC0]"),
    ("f16", "[1.5, -2.0, 0x7E00]"),
    ("i1", "[true, false, true]"),
])
def test_constants_of_every_element_type(dtype, literal):
    module = lamina.parse(f"""
func.func @main() -> tensor<3x{dtype}> {{
  %c = arith.constant dense<{literal}> : tensor<3x{dtype}>
  return %c : tensor<3x{dtype}>
}}""")
    (value,) = evaluate(module, [])
    if dtype == "i1":
        np.testing.assert_array_equal(value, [True, False, True])
    else:
        assert value.dtype == (ml_dtypes.bfloat16 if dtype == "bf16" else np.float16)
        np.testing.assert_array_equal(value[:2].astype(np.float32), [1.5, -2.0])
        assert np.isnan(value[2].astype(np.float32))


def test_unsupported_op_is_located():
    module = lamina.parse("""
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  return %e : tensor<4xf32>
}""")
    with pytest.raises(CompileError, match="cannot run 'tensor.empty'") as info:
        evaluate(module, [np.zeros(4, np.float32)])
    assert info.value.diagnostics[0].line == 3


def test_compare():
    expected = np.array([1.0, 100.0, np.nan, 0.0], np.float32)
    assert compare(expected.copy(), expected).ok
    close = expected * (1 + 5e-5)
    assert compare(close, expected).ok
    far = expected.copy()
    far[1] = 100.1
    result = compare(far, expected)
    assert not result.ok and result.mismatches == 1
    assert result.max_abs_error == pytest.approx(0.1, rel=1e-3)
    assert "MISMATCH (1 of 4 elements)" in str(result)
    nan_for_number = expected.copy()
    nan_for_number[0] = np.nan
    assert not compare(nan_for_number, expected).ok
    assert compare(far, expected, rtol=1e-2).ok
    ints = np.array([1, 2, 3], np.int32)
    assert not compare(ints + np.array([0, 0, 1], np.int32), ints).ok
    assert not compare(np.zeros(3, np.float32), np.zeros(4, np.float32)).ok


def test_tolerances_scale_with_magnitude():
    # A sum that cancels to ~0 is compared against the scale of the array.
    expected = np.array([1000.0, 1e-3], np.float32)
    actual = np.array([1000.0, 1e-3 + 5e-3], np.float32)
    assert compare(actual, expected).ok
    assert tolerance("i1") == (0.0, 0.0) and tolerance("bf16")[0] > tolerance("f32")[0]


def test_random_inputs():
    types = [TensorType((2, 3), "f32"), TensorType((4,), "bf16"), TensorType((5,), "i1"),
             TensorType((), "i32")]
    arrays = random_inputs(types, seed=1)
    assert [a.dtype for a in arrays] == [np.float32, ml_dtypes.bfloat16, np.bool_, np.int32]
    assert [a.shape for a in arrays] == [(2, 3), (4,), (5,), ()]
    assert np.all(np.abs(arrays[0]) <= 1)
    again = random_inputs(types, seed=1)
    assert all(np.array_equal(a, b) for a, b in zip(arrays, again))
