"""tf32 as the f32 matmuls use it: rounding to the nearest tf32 (ties
away from zero, as cvt.rna.tf32.f32) against exact rational arithmetic,
3xTF32's split of an f32 into two tf32 parts, and the NumPy references of
hw.mma (truncated, rounded, 3xTF32, transposed operands) and of nn.matmul
with precision = "tf32" against naive loops in f64."""

from fractions import Fraction

import numpy as np
import pytest

from lamina.dialects import hw, nn

RNG = np.random.default_rng(7)


def exact_round_tf32(x: np.float32) -> float:
    """x rounded to 10 mantissa bits, to nearest, ties away from zero, in
    exact arithmetic."""
    value = Fraction(float(x))
    if value == 0:
        return 0.0
    magnitude = abs(value)
    exponent = 0
    while magnitude >= 2:
        magnitude, exponent = magnitude / 2, exponent + 1
    while magnitude < 1:
        magnitude, exponent = magnitude * 2, exponent - 1
    scaled = magnitude * 2 ** 10
    whole = int(scaled)
    if scaled - whole >= Fraction(1, 2):
        whole += 1
    rounded = Fraction(whole, 2 ** 10) * Fraction(2) ** exponent
    return float(rounded if value > 0 else -rounded)


def test_round_tf32_is_nearest_ties_away():
    values = RNG.standard_normal(2000).astype(np.float32) * np.float32(1e3)
    # Exact ties: 10 mantissa bits and then the half bit.
    ties = np.array([1 + 2 ** -11, -(1 + 3 * 2 ** -11), 3 * (1 + 2 ** -11)], np.float32)
    values = np.concatenate([values, ties])
    rounded = nn.round_tf32(values)
    assert not (rounded.view(np.uint32) & np.uint32(~nn.TF32_MASK & 0xFFFFFFFF)).any()
    assert [float(r) for r in rounded] == [exact_round_tf32(v) for v in values]


def test_truncation_drops_the_low_bits():
    values = np.array([1 + 2 ** -11 + 2 ** -20, -(1 + 2 ** -10 - 2 ** -20)], np.float32)
    assert list(hw.to_tf32(values)) == [1.0, -1.0]


def test_split_tf32_keeps_22_bits():
    values = RNG.standard_normal(5000).astype(np.float32)
    big, small = hw.split_tf32(values)
    for part in (big, small):
        assert not (part.view(np.uint32) & np.uint32(~nn.TF32_MASK & 0xFFFFFFFF)).any()
    error = np.abs(values.astype(np.float64) - big.astype(np.float64) - small.astype(np.float64))
    assert (error <= 2.0 ** -22 * np.abs(values.astype(np.float64))).all()


def naive_mma(a, b, precision, transpose_a=False, transpose_b=False):
    """C = A x B in f64 from per-element products as the precision reads
    the operands (A stored K x M and B N x K where transposed)."""
    def read(x, transposed):
        return x.T if transposed else x
    a, b = read(a, transpose_a), read(b, transpose_b)
    m, k = a.shape
    n = b.shape[1]
    c = np.zeros((m, n))
    for i in range(m):
        for j in range(n):
            for p in range(k):
                x, y = np.float32(a[i, p]), np.float32(b[p, j])
                if precision == "3xtf32":
                    (xb, xs), (yb, ys) = hw.split_tf32(np.array([x])), hw.split_tf32(np.array([y]))
                    c[i, j] += float(xb[0]) * float(ys[0]) + float(xs[0]) * float(yb[0]) \
                        + float(xb[0]) * float(yb[0])
                else:
                    rounding = hw.to_tf32 if precision == "tf32" else nn.round_tf32
                    c[i, j] += float(rounding(np.array([x]))[0]) * float(rounding(np.array([y]))[0])
    return c


@pytest.mark.parametrize("precision", hw.MMA_PRECISIONS)
@pytest.mark.parametrize("transpose_a, transpose_b", [(False, False), (True, False), (False, True)])
def test_mma_reference(precision, transpose_a, transpose_b):
    m, n, k = 16, 8, 12
    a = RNG.standard_normal((k, m) if transpose_a else (m, k)).astype(np.float32)
    b = RNG.standard_normal((n, k) if transpose_b else (k, n)).astype(np.float32)
    view = hw.MmaOp.detached(precision=precision, transpose_a=transpose_a,
                             transpose_b=transpose_b)
    c = np.zeros((m, n), np.float32)
    view.reference(a, b, c, [])
    want = naive_mma(a, b, precision, transpose_a, transpose_b)
    np.testing.assert_allclose(c, want, rtol=1e-5, atol=1e-5)
    exact = (a.T if transpose_a else a).astype(np.float64) @ (b.T if transpose_b else b)
    # 3xTF32 is accurate to f32; one tf32 product is not.
    if precision == "3xtf32":
        np.testing.assert_allclose(c, exact, rtol=0, atol=1e-5)
    else:
        assert np.abs(c - exact).max() > 1e-4


def test_matmul_reference_rounds_to_tf32_where_allowed():
    a, b = RNG.standard_normal((5, 7)).astype(np.float32), RNG.standard_normal(
        (7, 3)).astype(np.float32)
    allowed = nn.MatmulOp.detached(precision="tf32").reference(a, b)
    np.testing.assert_allclose(allowed, naive_mma(a, b, "tf32_rounded"), rtol=1e-6, atol=1e-6)
    exact = nn.MatmulOp.detached().reference(a, b)
    assert np.abs(allowed - exact).max() > 1e-4
