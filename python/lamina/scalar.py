"""Ops defined once, by their scalar computation.

An elementwise op states what it computes on one element, as a Python
expression over value objects (`Scalar`), in its op class's `scalar`
method:

    class HardSwishOp(nn.UnaryElementwiseOp, name="hardswish"):
        def scalar(self, x):
            return x * clip(x / 6 + 0.5, 0, 1)

The form has the arithmetic operators (`+ - * / **`, unary `-`), the
comparisons (`< <= > >= == !=`, giving a boolean), Python numbers as
constants, Python's `abs`, and the functions `exp, log, tanh, erf, sqrt, rsqrt,
sin, cos, sigmoid, maximum, minimum, clip, where` (`select` is `where`),
`remainder` (C's fmod, of floats), and on integers only `bitwise_and,
bitwise_or, bitwise_xor, shift_left, shift_right` (arithmetic; an amount
outside [0, width) gives 0 to the left and the sign's copies to the right). The method
runs once per op with the op's view as `self`, so attributes choose what
it builds (`if self.approximate == "tanh": ...`). Lamina traces it into an
expression tree (`trace`) and derives from that tree everything else:

* the NumPy reference (`evaluate`), on arrays of at least f32;
* the scalar body of the op's `linalg.generic` (`to_mlir`), arith and
  math ops on f32 scalars;
* the register-tile body of a matmul epilogue on the hw level
  (`to_mlir(..., arith_only=True)`): arith ops only, so that GPU kernels
  need no libdevice; erf, tanh and sigmoid become rational approximations
  (largest error 3.2e-7 in f32), and an expression with exp, log, sqrt,
  rsqrt or pow has no such body (`arith_only_supported`);
* the fusion category: the op class's base (`elementwise`).

Dtypes. Every op is defined on f32, f16 and bf16: f16 and bf16 elements
are extended to f32, the expression is computed in f32, and the result is
rounded once to the result's type (the NumPy reference does the same). A
comparison gives i1 whatever its operands. On integer operands (i32, i64:
signless, computed as two's complement, wrapping on overflow as NumPy's
fixed-width integers do) the arithmetic operators, `abs`, `maximum`,
`minimum`, the comparisons and `where` are integer ops (signed
comparisons, `arith.addi`, `arith.maxsi`, ...), constants take the
operands' type, and the other functions have no integer form.

Reductions state their combining step the same way, in `ReductionOp`
subclasses: `combine(self, accumulator, x)` must be one of `acc + x`,
`acc * x`, `maximum(acc, x)`, `minimum(acc, x)` (associative, so NumPy's
reduce and the loops agree), `identity` is the accumulator's start, and
`finish(self, total, count)` (default: the total) maps the result of the
fold and the number of folded elements to the op's value, e.g. `total /
count` for a mean. Accumulation rules: f32, f16 and bf16 all accumulate
in f32 and round once at the end.
"""

from __future__ import annotations

import math as _math
from typing import Callable, Sequence

import numpy as np

PREDICATES = ("eq", "ne", "lt", "le", "gt", "ge")


class Scalar:
    """One element in a scalar definition: an operand (`arg`), a constant
    (`const`) or an operation (`kind`) on other scalars (`args`)."""

    __slots__ = ("kind", "args", "value")

    def __init__(self, kind: str, args: Sequence["Scalar"] = (), value=None):
        self.kind, self.args, self.value = kind, tuple(args), value

    def __repr__(self) -> str:
        if self.kind == "arg":
            return f"%{self.value}"
        if self.kind == "const":
            return repr(self.value)
        name = f"{self.kind}.{self.value}" if self.kind == "cmp" else self.kind
        return f"{name}({', '.join(map(repr, self.args))})"

    def __add__(self, other): return _node("add", self, other)
    def __radd__(self, other): return _node("add", other, self)
    def __sub__(self, other): return _node("sub", self, other)
    def __rsub__(self, other): return _node("sub", other, self)
    def __mul__(self, other): return _node("mul", self, other)
    def __rmul__(self, other): return _node("mul", other, self)
    def __truediv__(self, other): return _node("div", self, other)
    def __rtruediv__(self, other): return _node("div", other, self)
    def __pow__(self, other): return _node("pow", self, other)
    def __rpow__(self, other): return _node("pow", other, self)
    def __neg__(self): return _node("neg", self)
    def __abs__(self): return _node("abs", self)
    def __lt__(self, other): return _compare("lt", self, other)
    def __le__(self, other): return _compare("le", self, other)
    def __gt__(self, other): return _compare("gt", self, other)
    def __ge__(self, other): return _compare("ge", self, other)
    def __eq__(self, other): return _compare("eq", self, other)  # type: ignore[override]
    def __ne__(self, other): return _compare("ne", self, other)  # type: ignore[override]
    __hash__ = object.__hash__

    def __bool__(self):
        raise TypeError("a scalar definition cannot branch on an element's value; "
                        "use where(cond, a, b)")


def _lift(value) -> Scalar:
    if isinstance(value, Scalar):
        return value
    if isinstance(value, (bool, int, float, np.floating, np.integer)):
        return Scalar("const", value=float(value))
    raise TypeError(f"a scalar definition cannot use {type(value).__name__} {value!r}")


def _node(kind: str, *args) -> Scalar:
    return Scalar(kind, [_lift(a) for a in args])


def _compare(predicate: str, lhs, rhs) -> Scalar:
    return Scalar("cmp", [_lift(lhs), _lift(rhs)], predicate)


def exp(x): return _node("exp", x)
def log(x): return _node("log", x)
def tanh(x): return _node("tanh", x)
def erf(x): return _node("erf", x)
def sin(x): return _node("sin", x)
def cos(x): return _node("cos", x)
def sqrt(x): return _node("sqrt", x)
def rsqrt(x): return _node("rsqrt", x)
def sigmoid(x): return _node("sigmoid", x)
def maximum(a, b): return _node("maximum", a, b)
def minimum(a, b): return _node("minimum", a, b)
def clip(x, low, high): return minimum(maximum(x, low), high)
def remainder(a, b): return _node("rem", a, b)
def bitwise_and(a, b): return _node("and", a, b)
def bitwise_or(a, b): return _node("or", a, b)
def bitwise_xor(a, b): return _node("xor", a, b)
def shift_left(x, amount): return _node("shl", x, amount)
def shift_right(x, amount): return _node("shr", x, amount)


def where(cond, a, b):
    """`a` where `cond` holds, else `b`; `cond` is a comparison or a
    boolean operand (nn.select's)."""
    if not isinstance(cond, Scalar) or cond.kind not in ("cmp", "arg"):
        raise TypeError(f"where's condition is a comparison, not {cond!r}")
    return _node("select", cond, a, b)


def compare(predicate: str, a, b):
    """`a <predicate> b` for a predicate named as nn.compare's are."""
    if predicate not in PREDICATES:
        raise ValueError(f"unknown comparison '{predicate}' (one of {', '.join(PREDICATES)})")
    return _compare(predicate, a, b)


select = where


def trace(definition: Callable[..., object], arity: int) -> Scalar:
    """The expression tree of `definition` applied to `arity` operands."""
    return _lift(definition(*[Scalar("arg", value=i) for i in range(arity)]))


# ---------------------------------------------------------------------------
# NumPy.

_NUMPY = {
    "neg": np.negative, "abs": np.abs, "exp": np.exp, "log": np.log, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1.0 / np.sqrt(x), "tanh": np.tanh, "sin": np.sin, "cos": np.cos,
    "erf": lambda x: np.vectorize(_math.erf, otypes=[np.float64])(x),
    "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
    "pow": np.power, "maximum": np.maximum, "minimum": np.minimum,
    "select": np.where,
    "rem": np.fmod, "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
    "shl": lambda x, n: _shift_numpy(np.left_shift, x, n),
    "shr": lambda x, n: _shift_numpy(np.right_shift, x, n),
}


def _shift_numpy(shift, x, amount):
    """A shift by an amount outside [0, width) moves every bit out: 0 to
    the left, the sign's copies to the right."""
    width = np.dtype(x.dtype).itemsize * 8
    amount = np.asarray(amount).astype(x.dtype)
    inside = (amount >= 0) & (amount < width)
    return shift(x, np.where(inside, amount, 0 if shift is np.left_shift else width - 1)) * \
        (inside | (shift is not np.left_shift)).astype(x.dtype)
_NUMPY_COMPARE = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
                  "gt": np.greater, "ge": np.greater_equal}


def evaluate(tree: Scalar, operands: Sequence[np.ndarray]) -> np.ndarray:
    """The tree on NumPy arrays (broadcast); constants are weak Python
    floats, so the arrays' precision (f32 or f64) is kept."""
    shape = np.broadcast_shapes(*(np.shape(o) for o in operands))
    result = _evaluate(tree, operands)
    return result if np.shape(result) == shape else np.broadcast_to(result, shape)


def _evaluate(tree: Scalar, operands: Sequence[np.ndarray]):
    if tree.kind == "arg":
        return operands[tree.value]
    if tree.kind == "const":
        return tree.value
    args = [_evaluate(a, operands) for a in tree.args]
    integers = [a for a in args if isinstance(a, np.ndarray) and a.dtype.kind in "iu"]
    if integers and tree.kind != "select":
        # Constants take the integer operands' type (a weak float would
        # promote them to f64).
        args = [integers[0].dtype.type(a) if isinstance(a, float) else a for a in args]
    elif tree.kind == "select":
        branches = [a for a in args[1:] if isinstance(a, np.ndarray) and a.dtype.kind in "iu"]
        if branches:
            args = [args[0]] + [branches[0].dtype.type(a) if isinstance(a, float) else a
                                for a in args[1:]]
    with np.errstate(all="ignore"):
        if tree.kind == "cmp":
            return _NUMPY_COMPARE[tree.value](*args)
        result = _NUMPY[tree.kind](*args)
    return result


# ---------------------------------------------------------------------------
# MLIR scalars.

# NumPy's comparisons: NaN is unequal to everything and orders with nothing.
_PREDICATE_NAMES = {"eq": "OEQ", "ne": "UNE", "lt": "OLT", "le": "OLE", "gt": "OGT",
                    "ge": "OGE"}
_ARITH_ONLY_MISSING = {"exp", "log", "sqrt", "rsqrt", "pow", "sin", "cos"}
_SIGNED_PREDICATES = {"eq": "eq", "ne": "ne", "lt": "slt", "le": "sle", "gt": "sgt",
                      "ge": "sge"}

# Odd rational approximations x P(x^2) / Q(x^2) on a clamped range (the
# classic fits used by Eigen and XLA), coefficients from x^1 and x^0 up;
# their largest error in f32, measured against math.erf and np.tanh over
# [-10, 10], is 3.2e-7.
ERF_RATIONAL = (4.0, (-1.60960333262415e-02, -2.95459980854025e-03, -7.34990630326855e-04,
                      -5.69250639462346e-05, -2.10102402082508e-06, 2.77068142495902e-08,
                      -2.72614225801306e-10),
                (-1.42647390514189e-02, -7.37332916720468e-03, -1.68282697438203e-03,
                 -2.13374055278905e-04, -1.45660718464996e-05))
TANH_RATIONAL = (7.90531110763549805, (4.89352455891786e-03, 6.37261928875436e-04,
                                       1.48572235717979e-05, 5.12229709037114e-08,
                                       -8.60467152213735e-11, 2.00018790482477e-13,
                                       -2.76076847742355e-16),
                 (4.89352518554385e-03, 2.26843463243900e-03, 1.18534705686654e-04,
                  1.19825839466702e-06))


def arith_only_supported(tree: Scalar) -> bool:
    """Whether the tree has a body of arith ops only (the hw epilogues)."""
    return tree.kind not in _ARITH_ONLY_MISSING and all(
        arith_only_supported(a) for a in tree.args)


def cast_float(value, target):
    """A float scalar rounded (truncf) or extended (extf) to the float type
    `target`, at the current insertion point; itself if of that type."""
    from mlir import ir
    from mlir.dialects import arith
    if value.type == target:
        return value
    if isinstance(value.type, ir.F64Type) and ir.FloatType(target).width < 32:
        value = _f64_to_f32_round_to_odd(value)
    if ir.FloatType(target).width < ir.FloatType(value.type).width:
        return arith.truncf(target, value)
    return arith.extf(target, value)


def _f64_to_f32_round_to_odd(value):
    """An f64 scalar as the f32 nearest to it whose last bit is odd where it
    is inexact: rounding that to f16 or bf16 rounds the f64 once (f32 keeps
    more than two bits beyond theirs), and the JIT has no f64 -> f16 truncf
    of its own (compiler-rt's __truncdfhf2)."""
    from mlir import ir
    from mlir.dialects import arith, math
    i32 = ir.IntegerType.get_signless(32)
    rounded = arith.truncf(ir.F32Type.get(), value)
    back = arith.extf(value.type, rounded)
    bits = arith.bitcast(i32, rounded)
    one = arith.constant(i32, 1)
    even = arith.cmpi(arith.CmpIPredicate.eq, arith.andi(bits, one), arith.constant(i32, 0))
    inexact = arith.cmpf(arith.CmpFPredicate.ONE, back, value)
    # The neighbour toward `value`: one unit less in magnitude where the
    # rounding went away from zero.
    away = arith.cmpf(arith.CmpFPredicate.OGT, math.absf(back), math.absf(value))
    neighbour = arith.select(away, arith.subi(bits, one), arith.addi(bits, one))
    adjust = arith.andi(even, inexact)
    return arith.bitcast(ir.F32Type.get(), arith.select(adjust, neighbour, bits))


def _f32_constant(value: float):
    from mlir import ir
    from mlir.dialects import arith
    return arith.constant(ir.F32Type.get(), value)


def odd_rational(x, fit):
    """x P(x^2) / Q(x^2) of a fit (clamp, P, Q), x clamped to [-clamp, clamp]."""
    from mlir.dialects import arith
    clamp, numerator, denominator = fit
    x = arith.maximumf(arith.minimumf(x, _f32_constant(clamp)), _f32_constant(-clamp))
    x2 = arith.mulf(x, x)

    def horner(coefficients):
        value = _f32_constant(coefficients[-1])
        for c in reversed(coefficients[:-1]):
            value = arith.addf(arith.mulf(value, x2), _f32_constant(c))
        return value
    return arith.divf(arith.mulf(x, horner(numerator)), horner(denominator))


def _is_integer(t) -> bool:
    from mlir import ir
    return isinstance(t, ir.IntegerType)


def _integer_op(kind: str, args, predicate: str | None = None):
    """An integer arith op (signed where it matters) for a node kind."""
    from mlir import ir
    from mlir.dialects import arith, math
    if kind == "cmp":
        return arith.cmpi(getattr(arith.CmpIPredicate, _SIGNED_PREDICATES[predicate]), *args)
    if kind == "neg":
        return arith.subi(arith.constant(args[0].type, 0), args[0])
    if kind in ("shl", "shr"):
        # arith's shifts are poison past the width: the amount is taken
        # unsigned (a negative one is past it too) and clamped.
        x, amount = args
        width = arith.constant(x.type, ir.IntegerType(x.type).width)
        inside = arith.cmpi(arith.CmpIPredicate.ult, amount, width)
        if kind == "shl":
            return arith.select(inside, arith.shli(x, amount), arith.constant(x.type, 0))
        top = arith.subi(width, arith.constant(x.type, 1))
        return arith.shrsi(x, arith.select(inside, amount, top))
    build = {"add": arith.addi, "sub": arith.subi, "mul": arith.muli, "abs": math.absi,
             "maximum": arith.maxsi, "minimum": arith.minsi, "and": arith.andi,
             "or": arith.ori, "xor": arith.xori}.get(kind)
    if build is None:
        raise ValueError(f"'{kind}' has no integer form")
    return build(*args)


def to_mlir(tree: Scalar, operands: Sequence, arith_only: bool = False):
    """The tree as arith and math ops on f32 scalars (i1 for booleans;
    integer ops where the operands are integers) at the current insertion
    point; `arith_only` keeps to arith ops (see the module's docstring) and
    raises ValueError where it cannot."""
    from mlir import ir
    from mlir.dialects import arith, math

    def emit(node: Scalar, like=None):
        if node.kind == "arg":
            return operands[node.value]
        if node.kind == "const":
            if like is not None and _is_integer(like):
                return arith.constant(like, int(node.value))
            if like is not None and isinstance(like, ir.F64Type):
                return arith.constant(like, float(node.value))
            return _f32_constant(node.value)
        # Constants take the type of the operands they meet (the branches'
        # for a select).
        typed = range(1 if node.kind == "select" else 0, len(node.args))
        emitted = {i: emit(a) for i, a in enumerate(node.args)
                   if a.kind != "const" or (node.kind == "select" and i == 0)}
        like = next((emitted[i].type for i in typed if i in emitted), None)
        args = [emitted[i] if i in emitted else emit(a, like) for i, a in enumerate(node.args)]
        kind = node.kind
        if kind == "select":
            return arith.select(*args)
        if like is not None and _is_integer(like) and ir.IntegerType(like).width > 1:
            return _integer_op(kind, args, node.value)
        if arith_only and kind in _ARITH_ONLY_MISSING:
            raise ValueError(f"'{kind}' has no arith-only body")
        if kind == "cmp":
            return arith.cmpf(getattr(arith.CmpFPredicate, _PREDICATE_NAMES[node.value]), *args)
        if kind == "sigmoid":
            if arith_only:  # sigmoid(x) = (1 + tanh(x / 2)) / 2
                half = arith.mulf(args[0], _f32_constant(0.5))
                gate = odd_rational(half, TANH_RATIONAL)
                return arith.mulf(arith.addf(gate, _f32_constant(1.0)), _f32_constant(0.5))
            # 1 / (1 + e^-x) saturates to 0 and 1 without NaN: e^-x overflows to inf.
            one = arith.constant(args[0].type, 1.0)
            return arith.divf(one, arith.addf(one, math.exp(arith.negf(args[0]))))
        if arith_only and kind in ("erf", "tanh"):
            return odd_rational(args[0], ERF_RATIONAL if kind == "erf" else TANH_RATIONAL)
        if arith_only and kind == "abs":
            return arith.maximumf(args[0], arith.negf(args[0]))
        return {
            "neg": arith.negf, "abs": math.absf, "exp": math.exp, "log": math.log,
            "sqrt": math.sqrt, "rsqrt": math.rsqrt, "tanh": math.tanh, "erf": math.erf,
            "sin": math.sin, "cos": math.cos,
            "add": arith.addf, "sub": arith.subf, "mul": arith.mulf, "div": arith.divf,
            "pow": math.powf, "maximum": arith.maximumf, "minimum": arith.minimumf,
            "rem": arith.remf,
        }[kind](*args)

    return emit(tree)


# ---------------------------------------------------------------------------
# Reductions.

_COMBINES = {"add": np.add, "mul": np.multiply, "maximum": np.maximum, "minimum": np.minimum}


def combine_kind(tree: Scalar) -> str:
    """The NumPy-reducible step of a reduction's `combine` tree (traced on
    the accumulator and the element): add, mul, maximum or minimum."""
    if tree.kind in _COMBINES and {a.kind for a in tree.args} == {"arg"} \
            and {a.value for a in tree.args} == {0, 1}:
        return tree.kind
    raise ValueError(f"a reduction combines with acc + x, acc * x, maximum(acc, x) or "
                     f"minimum(acc, x), not {tree!r}")


def reduce_numpy(kind: str, x: np.ndarray, axes: tuple[int, ...], keepdims: bool):
    return _COMBINES[kind].reduce(x, axis=axes, keepdims=keepdims)
