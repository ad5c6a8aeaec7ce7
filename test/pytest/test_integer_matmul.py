"""nn.matmul on i8 operands, compiled for the CPU: results exactly equal to
the NumPy reference (i32 sums of sign-extended products, wrapping), for
shapes that are not multiples of the vector or dot-product group sizes,
batched and broadcast operands, and the extreme values -128 and 127."""

import numpy as np
import pytest

import lamina
from lamina.dialects import nn

RNG = np.random.default_rng(24)

MATMUL = """
func.func @main(%a: tensor<{lhs}x{a}>, %b: tensor<{rhs}xi8>) -> tensor<{out}xi32> {{
  %c = "nn.matmul"(%a, %b) : (tensor<{lhs}x{a}>, tensor<{rhs}xi8>) -> tensor<{out}xi32>
  return %c : tensor<{out}xi32>
}}
"""


def dims(shape):
    return "x".join(map(str, shape))


def compiled(lhs, rhs, target="cpu", a="i8"):
    out = np.broadcast_shapes(lhs[:-2], rhs[:-2]) + (lhs[-2], rhs[-1])
    return lamina.compile(MATMUL.format(lhs=dims(lhs), rhs=dims(rhs), out=dims(out), a=a),
                          target=target)


def naive(a, b):
    """Sums of products in Python integers, wrapped to i32."""
    a, b = a.astype(object), b.astype(object)
    exact = np.matmul(a, b)
    return ((exact + 2 ** 31) % 2 ** 32 - 2 ** 31).astype(np.int32)


@pytest.mark.parametrize("lhs, rhs", [
    ((1, 1), (1, 1)),
    ((5, 7), (7, 3)),
    ((17, 33), (33, 19)),
    ((64, 128), (128, 64)),
    ((3, 130), (130, 65)),
    ((2, 9, 12), (2, 12, 5)),
    ((3, 4, 20), (20, 6)),
    ((7, 21), (2, 21, 10)),
])
def test_matches_reference_exactly(lhs, rhs):
    a = RNG.integers(-128, 128, lhs, dtype=np.int8)
    b = RNG.integers(-128, 128, rhs, dtype=np.int8)
    got = compiled(lhs, rhs)(a, b)
    want = nn.MatmulOp.detached().reference(a, b)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(want, naive(a, b))


def test_extreme_values():
    # -128 * -128 summed over K = 256 is 2**22: far from i32's range, but
    # beyond what i16 or a u8 x s8 pair without compensation would hold.
    a = np.full((4, 256), -128, np.int8)
    b = np.full((256, 8), -128, np.int8)
    b[:, 1] = 127
    got = compiled(a.shape, b.shape)(a, b)
    np.testing.assert_array_equal(got, naive(a, b))
    assert got[0, 0] == 2 ** 22


def test_reference_wraps_like_i32():
    a = np.full((1, 2 ** 17 + 1), -128, np.int8)
    b = np.full((2 ** 17 + 1, 1), -128, np.int8)
    np.testing.assert_array_equal(nn.MatmulOp.detached().reference(a, b), naive(a, b))


# Unsigned activations by signed weights (vpdpbusd's own form where the CPU
# has VNNI, the widening path where it does not), at the extremes 0, 255
# and -128, 127 too.
@pytest.mark.parametrize("target", ["cpu", "cpu:haswell"])
@pytest.mark.parametrize("lhs, rhs", [
    ((5, 7), (7, 3)),
    ((17, 33), (33, 19)),
    ((2, 9, 12), (2, 12, 5)),
    ((3, 4, 20), (20, 6)),
])
def test_unsigned_activations_match_reference_exactly(lhs, rhs, target):
    a = RNG.integers(0, 256, lhs, dtype=np.uint8)
    b = RNG.integers(-128, 128, rhs, dtype=np.int8)
    a.flat[:2] = (0, 255)
    b.flat[:2] = (-128, 127)
    got = compiled(lhs, rhs, target, a="ui8")(a, b)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, naive(a, b))
    np.testing.assert_array_equal(nn.MatmulOp.detached().reference(a, b), naive(a, b))
