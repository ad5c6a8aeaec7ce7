"""The scalar form (lamina.scalar): tracing, the NumPy meaning derived from
it against naive loops, the built-in ops' references it gives, and its
limits, stated as errors."""

import math

import numpy as np
import pytest
from ml_dtypes import bfloat16

from lamina import scalar
from lamina.dialects import nn
from lamina.scalar import clip, erf, exp, maximum, minimum, sigmoid, where

X = np.linspace(-7.0, 7.0, 57, dtype=np.float32)


def test_a_definition_traces_to_an_expression_tree():
    tree = scalar.trace(lambda x: x * clip(x / 6 + 0.5, 0, 1), 1)
    assert repr(tree) == "mul(%0, minimum(maximum(add(div(%0, 6.0), 0.5), 0.0), 1.0))"
    assert repr(scalar.trace(lambda a, b: where(a > b, a, 0.01 * b), 2)) == \
        "select(cmp.gt(%0, %1), %0, mul(0.01, %1))"


@pytest.mark.parametrize("definition, naive", [
    (lambda x: x * clip(x / 6 + 0.5, 0, 1), lambda x: x * min(max(x / 6 + 0.5, 0.0), 1.0)),
    (lambda x: where(x > 0, x, 0.01 * x), lambda x: x if x > 0 else 0.01 * x),
    (lambda x: x * sigmoid(x), lambda x: x / (1 + math.exp(-x))),
    (lambda x: abs(x) ** 0.5 - erf(x) + exp(-x * x), lambda x: abs(x) ** 0.5 - math.erf(x)
     + math.exp(-x * x)),
])
def test_numpy_meaning_matches_naive_loops(definition, naive):
    got = scalar.evaluate(scalar.trace(definition, 1), [X])
    want = np.array([naive(float(x)) for x in X])
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)


def test_constants_keep_the_operands_precision():
    tree = scalar.trace(lambda x: x / 3, 1)
    assert scalar.evaluate(tree, [X]).dtype == np.float32
    assert scalar.evaluate(tree, [X.astype(np.float64)]).dtype == np.float64


@pytest.mark.parametrize("dtype", [np.float32, np.float16, bfloat16])
def test_builtin_references_come_from_the_scalar_form(dtype):
    """Computed in f32 and rounded once to the operand's type."""
    x = X.astype(dtype)
    wide = x.astype(np.float32)
    silu = nn.SiluOp.detached().reference(x)
    assert silu.dtype == x.dtype
    np.testing.assert_array_equal(silu, (wide * (1 / (1 + np.exp(-wide)))).astype(dtype))
    relu = nn.ReluOp.detached().reference(x)
    np.testing.assert_array_equal(relu, np.maximum(x, 0))
    less = nn.CompareOp.detached(predicate="lt").reference(x, x[::-1].copy())
    np.testing.assert_array_equal(less, x < x[::-1])


def test_reductions_fold_with_their_combining_step():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 10
    mean = nn.ReduceMeanOp.detached(axes=[1, 2])
    assert mean.combine_kind() == "add"
    np.testing.assert_allclose(mean.reference(x), x.mean(axis=(1, 2)), rtol=1e-6)
    assert nn.ReduceMaxOp.detached(axes=[0]).combine_kind() == "maximum"
    np.testing.assert_array_equal(nn.ReduceMinOp.detached(axes=[-1], keepdims=True)
                                  .reference(x), x.min(axis=-1, keepdims=True))


def test_the_epilogue_body_is_arith_only_where_it_can_be():
    assert scalar.arith_only_supported(scalar.trace(lambda x: x * sigmoid(x) + erf(x), 1))
    assert not scalar.arith_only_supported(scalar.trace(lambda x: exp(x) + 1, 1))
    assert nn.GeluOp.detached(approximate="tanh").scalar_tree() is not None


def test_branching_on_an_element_is_an_error():
    with pytest.raises(TypeError, match=r"cannot branch on an element's value; use where"):
        scalar.trace(lambda x: x if x > 0 else -x, 1)
    with pytest.raises(TypeError, match="cannot use str 'two'"):
        scalar.trace(lambda x: x * "two", 1)
    with pytest.raises(TypeError, match="where's condition is a comparison, not 1.0"):
        scalar.trace(lambda x: where(1.0, x, 0), 1)
    with pytest.raises(ValueError, match="unknown comparison 'lte'"):
        scalar.trace(lambda x: scalar.compare("lte", x, 0), 1)


def test_a_constant_definition_fills_the_operands_shape():
    got = scalar.evaluate(scalar.trace(lambda x: 2.5, 1), [np.zeros((2, 3), np.float32)])
    np.testing.assert_array_equal(got, np.full((2, 3), 2.5))


def test_a_reduction_step_numpy_cannot_reduce_is_an_error():
    with pytest.raises(ValueError, match=r"acc \+ x, acc \* x, maximum\(acc, x\) or "
                                         r"minimum\(acc, x\), not add\(%0, mul\(2.0, %1\)\)"):
        scalar.combine_kind(scalar.trace(lambda acc, x: acc + 2 * x, 2))
    assert scalar.combine_kind(scalar.trace(lambda acc, x: minimum(acc, x), 2)) == "minimum"
    assert scalar.combine_kind(scalar.trace(lambda acc, x: maximum(x, acc), 2)) == "maximum"
