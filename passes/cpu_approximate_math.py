"""--cpu-approximate-math: `math.exp`, `math.log`, `math.tanh`, `math.erf`
and `math.rsqrt` on vectors of f32 become polynomial approximations in
arith ops, so that they stay vectors.

LLVM has no vector versions of these functions: `convert-math-to-llvm` and
`convert-math-to-libm` would turn each lane into a call of the scalar
`expf`, `logf`, `tanhf` or `erff`, and softmax, GELU or layer norm would
run at scalar speed. Upstream's polynomial approximations are not in the
Python bindings, so this pass builds its own (Cephes-style range
reduction and minimax polynomials):

* `exp`: x = n ln2 + r with |r| <= ln2/2 (ln2 split in two constants so
  that r is exact), a degree-7 polynomial for e^r, and 2^n applied as two
  exponent-field multiplications (subnormal results come out right);
  overflow gives +inf, underflow 0, NaN stays NaN;
* `log`: x = 2^e m with m in [sqrt(1/2), sqrt(2)) (subnormals scaled
  first), log(1+f) by a degree-9 polynomial; log(0) = -inf, log(x<0) =
  NaN, log(+inf) = +inf;
* `tanh`: an odd polynomial for |x| < 0.625, else
  sign(x) (1 - 2 / (e^{2|x|} + 1)) with the `exp` above;
* `erf`: an odd polynomial for |x| < 1, else 1 - e^{-x^2} g(1/|x|) with
  x^2 split exactly into two floats and a polynomial g; |x| >= 4 gives +-1;
* `rsqrt`: 1 / sqrt(x) (the hardware square root and division, both
  correctly rounded).

Accuracy over the whole f32 range (`test/pytest/test_vector_math.py`
sweeps every 4099th bit pattern): at most 1.18 ulp for `exp`, 0.74 for
`log`, 1.20 for `tanh`, 2.28 for `erf` and 1.47 for `rsqrt`; infinities
and NaN as the C library gives them. Scalar ops keep libm.

Expects vector arithmetic (after vectorisation), before the math ops are
converted to LLVM. Guarantees: no `math.exp`, `math.log`, `math.tanh`,
`math.erf` or `math.rsqrt` on vectors of f32 remains.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, math

from lamina.pass_registry import Pass, register_pass

LN2_HI = 0.693359375            # exact in 9 bits: n * LN2_HI is exact for |n| < 2^15
LN2_LO = -2.12194440e-4
LOG2E = 1.44269504088896341
# e^r - 1 - r = r^2 (c0 + c1 r + ...), |r| <= ln2/2 (Cephes expf).
EXP_POLY = (5.0000001201e-1, 1.6666665459e-1, 4.1665795894e-2, 8.3334519073e-3,
            1.3981999507e-3, 1.9875691500e-4)
# log(1+f) = f - f^2/2 + f^3 P(f), f in [sqrt(1/2)-1, sqrt(2)-1] (Cephes logf).
LOG_POLY = (3.3333331174e-1, -2.4999993993e-1, 2.0000714765e-1, -1.6668057665e-1,
            1.4249322787e-1, -1.2420140846e-1, 1.1676998740e-1, -1.1514610310e-1,
            7.0376836292e-2)
# tanh(x) = x + x^3 P(x^2), |x| < 0.625 (Cephes tanhf).
TANH_POLY = (-3.33332819422e-1, 1.33314422036e-1, -5.37397155531e-2, 2.06390887954e-2,
             -5.70498872745e-3)
# erf(x) = x P(x^2) for |x| < 1, and erfc(x) = e^{-x^2} G(1/x) for 1 <= x <= 4:
# weighted least-squares fits in double precision of erf(x)/x (relative error
# 1.2e-9) and erfc(x) e^{x^2} (1.6e-8), rounded to f32.
ERF_SMALL = (1.1283791065216064, -0.3761262595653534, 0.1128358244895935,
    -0.026853691786527634, 0.005188100505620241, -0.0008008197182789445, 7.847265806049109e-05)
ERF_LARGE = (0.00012574915308505297, 0.5616816282272339, 0.02122316136956215,
    -0.37895673513412476, 0.2390754520893097, 0.22257396578788757, -0.518410861492157,
    0.42459836602211, -0.17400489747524261, 0.029677744954824448)


def _splat(value: float, like: ir.Type) -> ir.Value:
    vector = ir.VectorType(like)
    element = vector.element_type
    if isinstance(element, ir.IntegerType):
        attr = ir.IntegerAttr.get(element, int(value))
    else:
        attr = ir.FloatAttr.get(element, float(value))
    return arith.constant(like, ir.DenseElementsAttr.get_splat(like, attr))


def _int_type(like: ir.Type) -> ir.Type:
    vector = ir.VectorType(like)
    return ir.VectorType.get(vector.shape, ir.IntegerType.get_signless(32),
                             scalable=vector.scalable_dims)


def _horner(x: ir.Value, coefficients) -> ir.Value:
    """c0 + c1 x + c2 x^2 + ... by fused multiply-adds."""
    result = _splat(coefficients[-1], x.type)
    for c in reversed(coefficients[:-1]):
        result = math.fma(result, x, _splat(c, x.type))
    return result


def _pow2(n: ir.Value, like: ir.Type) -> ir.Value:
    """2^n for an integer vector n in [-126, 127], built in the exponent field."""
    biased = arith.addi(n, _splat(127, n.type))
    return arith.bitcast(like, arith.shli(biased, _splat(23, n.type)))


def _exp(x: ir.Value) -> ir.Value:
    t = x.type
    clamped = arith.minimumf(arith.maximumf(x, _splat(-104.0, t)), _splat(88.8, t))
    n = math.roundeven(arith.mulf(clamped, _splat(LOG2E, t)))
    r = math.fma(n, _splat(-LN2_HI, t), clamped)
    r = math.fma(n, _splat(-LN2_LO, t), r)
    r2 = arith.mulf(r, r)
    p = math.fma(_horner(r, EXP_POLY), r2, arith.addf(r, _splat(1.0, t)))
    # 2^n = 2^(n/2) 2^(n - n/2): each factor is a normal float for n in
    # [-150, 129], so subnormal results round once and large ones overflow.
    ni = arith.fptosi(_int_type(t), n)
    half = arith.shrsi(ni, _splat(1, ni.type))
    result = arith.mulf(arith.mulf(p, _pow2(half, t)), _pow2(arith.subi(ni, half), t))
    return arith.select(arith.cmpf(arith.CmpFPredicate.UNO, x, x), x, result)


def _log(x: ir.Value) -> ir.Value:
    t = x.type
    it = _int_type(t)
    # Subnormals: scale by 2^23 first.
    tiny = arith.cmpf(arith.CmpFPredicate.OLT, x, _splat(1.17549435e-38, t))
    scaled = arith.select(tiny, arith.mulf(x, _splat(8388608.0, t)), x)
    bits = arith.bitcast(it, scaled)
    exponent = arith.subi(arith.shrui(bits, _splat(23, it)), _splat(126, it))
    exponent = arith.select(tiny, arith.subi(exponent, _splat(23, it)), exponent)
    # m in [0.5, 1): the mantissa with the exponent of 0.5.
    m = arith.bitcast(t, arith.ori(arith.andi(bits, _splat(0x007FFFFF, it)),
                                   _splat(0x3F000000, it)))
    e = arith.sitofp(t, exponent)
    small = arith.cmpf(arith.CmpFPredicate.OLT, m, _splat(0.707106781186547524, t))
    one = _splat(1.0, t)
    f = arith.select(small, arith.subf(arith.addf(m, m), one), arith.subf(m, one))
    e = arith.select(small, arith.subf(e, one), e)
    f2 = arith.mulf(f, f)
    y = arith.mulf(arith.mulf(f2, f), _horner(f, LOG_POLY))
    y = math.fma(e, _splat(LN2_LO, t), y)
    y = math.fma(f2, _splat(-0.5, t), y)
    result = math.fma(e, _splat(LN2_HI, t), arith.addf(f, y))
    # Special values: log(0) = -inf, log(x < 0) = NaN, log(+inf) = +inf, NaN.
    result = arith.select(arith.cmpf(arith.CmpFPredicate.OEQ, x, _splat(0.0, t)),
                          _splat(float("-inf"), t), result)
    result = arith.select(arith.cmpf(arith.CmpFPredicate.OEQ, x, _splat(float("inf"), t)),
                          x, result)
    invalid = arith.cmpf(arith.CmpFPredicate.ULT, x, _splat(0.0, t))
    return arith.select(invalid, _splat(float("nan"), t), result)


def _tanh(x: ir.Value) -> ir.Value:
    t = x.type
    ax = math.absf(x)
    x2 = arith.mulf(x, x)
    small = math.fma(arith.mulf(x2, x), _horner(x2, TANH_POLY), x)
    e = _exp(arith.addf(ax, ax))
    large = arith.subf(_splat(1.0, t),
                       arith.divf(_splat(2.0, t), arith.addf(e, _splat(1.0, t))))
    large = math.copysign(large, x)
    result = arith.select(arith.cmpf(arith.CmpFPredicate.OLT, ax, _splat(0.625, t)), small, large)
    return arith.select(arith.cmpf(arith.CmpFPredicate.UNO, x, x), x, result)


def _erf(x: ir.Value) -> ir.Value:
    t = x.type
    ax = arith.minimumf(math.absf(x), _splat(4.0, t))
    x2 = arith.mulf(x, x)
    small = arith.mulf(x, _horner(x2, ERF_SMALL))
    # e^{-x^2} with x^2 = hi + lo exactly: e^{-hi} (1 - lo).
    hi = arith.mulf(ax, ax)
    lo = math.fma(ax, ax, arith.negf(hi))
    decay = arith.mulf(_exp(arith.negf(hi)), arith.subf(_splat(1.0, t), lo))
    u = arith.divf(_splat(1.0, t), ax)
    erfc = arith.mulf(decay, _horner(u, ERF_LARGE))
    large = math.copysign(arith.subf(_splat(1.0, t), erfc), x)
    result = arith.select(arith.cmpf(arith.CmpFPredicate.OLT, ax, _splat(1.0, t)), small, large)
    return arith.select(arith.cmpf(arith.CmpFPredicate.UNO, x, x), x, result)


def _rsqrt(x: ir.Value) -> ir.Value:
    return arith.divf(_splat(1.0, x.type), math.sqrt(x))


APPROXIMATIONS = {"math.exp": _exp, "math.log": _log, "math.tanh": _tanh, "math.erf": _erf,
                  "math.rsqrt": _rsqrt}


def _is_f32_vector(t: ir.Type) -> bool:
    return isinstance(t, ir.VectorType) and isinstance(ir.VectorType(t).element_type, ir.F32Type)


@register_pass
@dataclass
class CPUApproximateMath(Pass):
    """Replaces exp, log, tanh, erf and rsqrt on f32 vectors by polynomial approximations, so that they stay vectorised."""

    argument = "cpu-approximate-math"
    verifies_lamina_ops = False  # no op of Lamina's dialects at its stage
    anchor = "func.func"

    def run(self, op: ir.Operation) -> None:
        found = []

        def collect(child):
            if child.name in APPROXIMATIONS and _is_f32_vector(child.results[0].type):
                found.append(child.operation)
            return ir.WalkResult.ADVANCE

        op.walk(collect, ir.WalkOrder.PRE_ORDER)
        for math_op in found:
            with math_op.location, ir.InsertionPoint(math_op):
                value = APPROXIMATIONS[math_op.name](math_op.operands[0])
            math_op.results[0].replace_all_uses_with(value)
            math_op.erase()
