"""Random valid nn programs, for differential testing (`lamina-fuzz`).

NNSmith's recipe: shapes are chosen before ops, so every program verifies.
The generator keeps a pool of values, each with its shape, element type
and an interval that holds its elements, and adds ops whose operands it
can satisfy from the pool (multi-use values) or with new inputs of the
shapes the op needs (broadcasting operands, contraction partners). Every
op family of the nn dialect and each of its attributes is drawn;
functions return several results.

    program = generate_program(seed=7)
    program.text()            # MLIR, generic form, `@main`
    program.inputs            # argument types; inputs are uniform in [-1, 1)

Programs stay away from where an op is ill-conditioned, so that a
difference from the float64 reference is a bug and not rounding: operands
of `log`, `sqrt`, `rsqrt`, `div` (divisor) and `pow` (base) are made
positive and away from zero (`abs(x) + c`), `exp` and `pow` see bounded
operands, magnitudes are capped before products and sums (an f16 sum of
4096 terms stays finite), normalisations vary along their normalised
dims and get an epsilon of at least 0.1 in f16 and bf16 (a normalisation
amplifies the rounding of its input by up to 1/sqrt(epsilon)), and discontinuous ops (`compare`,
casts to i1) only see values computed exactly from the inputs.

Dims are sizes with a symbol (`Dim(17, "s3")`): dims that must be equal
share a symbol, so that the reducer (`lamina.fuzz_reduce`) can shrink a
size everywhere at once. Sizes are 1, primes and sizes no tile or vector
width divides (17, 31, 33, 65), kept small so that a program compiles in
a fraction of a second. Result types are inferred here, by rules written
independently of the ops' own (a program the verifier rejects is a
finding too).

A seed's profile (`program_profile`, drawn apart from the program's own
random stream) makes one program in five degenerate: size-0 dims as often
as size-1 ones, and slices, pads and concatenations drawn more, with empty
slices (from the end of an axis or up to a limit at their start); and one
in ten GPU-shaped: an f16 or bf16 matmul with M = 1 or K = 1, 2-d or
batched, with a bias, relu or gelu, and a cast to f32 (the GEMVs of
batch-1 decoding), which runs through the CPU configurations like any
program; and about one in twelve starts with a quantised matmul (uint8 or
int8 activations, int8 weights per tensor or per column, a bias and relu,
the result quantised again or left a float, or an i8 x i8 -> i32
product), exact by construction (powers of two for scales, short sums), so
that its integer results are compared exactly. Ops whose meaning is undefined on empty operands (a maximum or a
softmax over nothing, an attention over no keys) are not drawn on them.
"""

from __future__ import annotations

import dataclasses
import math
import random
from dataclasses import dataclass, field
from typing import Callable, Sequence

FLOATS = ("f32", "f16", "bf16")
INTEGERS = ("i8", "ui8", "i32")
SIZES = (1, 1, 2, 3, 4, 5, 7, 8, 11, 13, 16, 17, 31, 33, 64, 65)
# A degenerate program's sizes: empty and unit dims much more often.
DEGENERATE_SIZES = SIZES + (0,) * 6 + (1,) * 3
# What share of programs is degenerate (size-0 and size-1 dims, empty
# slices), what share is GPU-shaped (a GEMV: a matmul with M = 1 or
# K = 1 in f16 or bf16, with a bias and an activation, as batch-1 decoding
# runs) and what share starts with a quantised matmul (Generator.quantized). The share is drawn from a stream of its own, so that the other
# programs of a seed stay the ones they were.
PROFILES = (("degenerate", 0.2), ("gemv", 0.1), ("quantized", 0.08))
MAX_ELEMENTS = 4096  # per tensor
MAX_RANK = 4


class Invalid(ValueError):
    """An op's operands or attributes break its rules."""


@dataclass(frozen=True)
class Dim:
    """A dimension: its size and the symbol it shares with equal dims (None
    for a size derived from others, such as a convolution's output)."""

    size: int
    sym: str | None = None


Shape = tuple[Dim, ...]


def sizes(shape: Shape) -> tuple[int, ...]:
    return tuple(d.size for d in shape)


def elements(shape: Shape) -> int:
    return math.prod(sizes(shape))


@dataclass
class TypeInfo:
    """A value's type: shape (with symbols) and element type."""

    shape: Shape
    dtype: str

    def mlir(self) -> str:
        return "tensor<" + "".join(f"{d.size}x" for d in self.shape) + self.dtype + ">"


@dataclass
class Op:
    """One op: `kind` is the MLIR op name, `attrs` the attributes as Python
    values (rendered by `render_attribute`), `recipe` the op-specific data
    that is not an attribute (a reshape's or broadcast's target rule, a
    constant's value)."""

    kind: str
    operands: list[str]
    results: list[str]
    attrs: dict = field(default_factory=dict)
    recipe: dict = field(default_factory=dict)


@dataclass
class Program:
    """A function `@main(inputs) -> outputs` of ops. `inputs` maps names to
    shapes of symbols; `sizes` maps symbols to sizes."""

    inputs: dict[str, tuple[tuple[str, ...], str]]
    ops: list[Op]
    outputs: list[str]
    sizes: dict[str, int]
    seed: int = 0

    # -- types ---------------------------------------------------------------

    def input_type(self, name: str) -> TypeInfo:
        syms, dtype = self.inputs[name]
        return TypeInfo(tuple(Dim(self.sizes[s], s) for s in syms), dtype)

    def types(self) -> dict[str, TypeInfo]:
        """Every value's type, inferred from the inputs through each op's
        rule. Raises Invalid when an op's rule fails."""
        types = {name: self.input_type(name) for name in self.inputs}
        for op in self.ops:
            try:
                operand_types = [types[name] for name in op.operands]
            except KeyError as missing:
                raise Invalid(f"{op.kind} uses {missing}, which is not defined before it") from None
            try:
                results = RULES[op.kind](operand_types, op.attrs, op.recipe, self.sizes)
            except Invalid:
                raise
            except (KeyError, IndexError, TypeError, ValueError, ZeroDivisionError) as error:
                # (A reduced program can lack what an op requires.)
                raise Invalid(f"{op.kind}: {type(error).__name__}: {error}") from None
            for result, t in zip(op.results, results):
                if elements(t.shape) > 16 * MAX_ELEMENTS:
                    raise Invalid(f"{op.kind} makes {t.mlir()}, too large")
                types[result] = t
        for name in self.outputs:
            if name not in types:
                raise Invalid(f"output {name} is not defined")
        return types

    def is_valid(self) -> bool:
        try:
            self.types()
            return bool(self.outputs)
        except Invalid:
            return False

    # -- text ----------------------------------------------------------------

    def text(self, header: str = "") -> str:
        """The program as MLIR text in generic form, function `@main`."""
        types = self.types()
        arguments = ", ".join(f"%{name}: {types[name].mlir()}" for name in self.inputs)
        results = ", ".join(types[name].mlir() for name in self.outputs)
        lines = [header.rstrip("\n")] if header else []
        lines.append(f"func.func @main({arguments}) -> ({results}) {{")
        for op in self.ops:
            lines.append("  " + render_op(op, types))
        lines.append(f"  return {', '.join('%' + n for n in self.outputs)} : {results}")
        lines.append("}")
        return "\n".join(lines) + "\n"

    # -- structure -------------------------------------------------------------

    def producers(self) -> dict[str, Op]:
        return {result: op for op in self.ops for result in op.results}

    def backward_slice(self, name: str) -> list[Op]:
        """The ops `name` depends on, in program order."""
        producers = self.producers()
        needed, stack = set(), [name]
        while stack:
            op = producers.get(stack.pop())
            if op is not None and id(op) not in needed:
                needed.add(id(op))
                stack.extend(op.operands)
        return [op for op in self.ops if id(op) in needed]

    def without_dead_code(self) -> "Program":
        """A copy without ops and inputs that no output depends on."""
        live = set(self.outputs)
        ops = []
        for op in reversed(self.ops):
            if any(r in live for r in op.results):
                ops.append(op)
                live.update(op.operands)
        inputs = {n: t for n, t in self.inputs.items() if n in live}
        return dataclasses.replace(self, inputs=inputs, ops=list(reversed(ops)))

    def copy(self) -> "Program":
        return Program(dict(self.inputs),
                       [Op(o.kind, list(o.operands), list(o.results), dict(o.attrs),
                           dict(o.recipe)) for o in self.ops],
                       list(self.outputs), dict(self.sizes), self.seed)

    def to_json(self) -> dict:
        return {"inputs": {n: [list(s), d] for n, (s, d) in self.inputs.items()},
                "ops": [dataclasses.asdict(o) for o in self.ops],
                "outputs": self.outputs, "sizes": self.sizes, "seed": self.seed}

    @staticmethod
    def from_json(data: dict) -> "Program":
        def tupled(value):
            return tuple(tupled(v) for v in value) if isinstance(value, list) else value

        ops = [Op(o["kind"], o["operands"], o["results"],
                  {k: tupled(v) for k, v in o["attrs"].items()},
                  {k: tupled(v) for k, v in o["recipe"].items()}) for o in data["ops"]]
        return Program({n: (tuple(s), d) for n, (s, d) in data["inputs"].items()}, ops,
                       list(data["outputs"]), dict(data["sizes"]), data.get("seed", 0))


# ---------------------------------------------------------------------------
# Rendering.


def float_literal(value: float) -> str:
    """A float as MLIR writes it (`1.0e-05`, never `1e-05`)."""
    text = repr(float(value))
    mantissa, e, exponent = text.partition("e")
    if e and "." not in mantissa:
        text = f"{mantissa}.0e{exponent}"
    return text


def render_attribute(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value} : i64"
    if isinstance(value, float):
        return f"{float_literal(value)} : f32"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, tuple):
        return "array<i64" + (": " + ", ".join(map(str, value)) if value else "") + ">"
    raise TypeError(f"no attribute for {value!r}")


def render_op(op: Op, types: dict[str, TypeInfo]) -> str:
    results = ", ".join("%" + r for r in op.results)
    result_types = ", ".join(types[r].mlir() for r in op.results)
    if op.kind == "arith.constant":
        t = types[op.results[0]]
        value = op.recipe["value"]
        literal = str(int(value)) if t.dtype in INTEGERS else float_literal(value)
        return f"{results} = arith.constant dense<{literal}> : {t.mlir()}"
    attrs = ""
    if op.attrs:
        attrs = " {" + ", ".join(f"{k} = {render_attribute(v)}"
                                 for k, v in sorted(op.attrs.items())) + "}"
    operands = ", ".join("%" + o for o in op.operands)
    operand_types = ", ".join(types[o].mlir() for o in op.operands)
    return (f'{results} = "{op.kind}"({operands}){attrs} : ({operand_types}) -> '
            f"{result_types}")


# ---------------------------------------------------------------------------
# Type rules, one per op kind: (operand types, attrs, recipe) -> result types.


def _same_dtype(types: Sequence[TypeInfo]) -> str:
    if len({t.dtype for t in types}) != 1:
        raise Invalid("element types differ")
    return types[0].dtype


def broadcast(*shapes: Shape) -> Shape:
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(rank):
        dims = [s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0]
        big = [d for d in dims if d.size != 1]
        if len({d.size for d in big}) > 1:
            raise Invalid("shapes do not broadcast")
        out.append(big[0] if big else dims[0])
    return tuple(out)


def _axis(axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise Invalid("axis out of range")
    return axis % rank


def _unary(types, attrs, recipe, table):
    if types[0].dtype not in FLOATS:
        raise Invalid("not a float")
    return [types[0]]


def _binary(types, attrs, recipe, table):
    dtype = _same_dtype(types)
    if dtype not in FLOATS:
        raise Invalid("not a float")
    return [TypeInfo(broadcast(types[0].shape, types[1].shape), dtype)]


def _compare(types, attrs, recipe, table):
    return [TypeInfo(_binary(types, attrs, recipe, table)[0].shape, "i1")]


def _select(types, attrs, recipe, table):
    if types[0].dtype != "i1":
        raise Invalid("condition is not i1")
    return [TypeInfo(broadcast(*(t.shape for t in types)), _same_dtype(types[1:]))]


def _cast(types, attrs, recipe, table):
    return [TypeInfo(types[0].shape, recipe["to"])]


def _matmul(types, attrs, recipe, table):
    lhs, rhs = types
    dtype = _same_dtype(types)
    if dtype == "i8":
        dtype = "i32"  # an integer product accumulates in i32
    if len(lhs.shape) < 2 or len(rhs.shape) < 2 or lhs.shape[-1].size != rhs.shape[-2].size:
        raise Invalid("matmul shapes")
    batch = broadcast(lhs.shape[:-2], rhs.shape[:-2]) if (lhs.shape[:-2] or rhs.shape[:-2]) else ()
    return [TypeInfo(batch + (lhs.shape[-2], rhs.shape[-1]), dtype)]


def _window(size: int, kernel: int, stride: int, dilation: int, pad: int) -> int:
    return (size + pad - dilation * (kernel - 1) - 1) // stride + 1


def _conv2d(types, attrs, recipe, table):
    x, w = types[0], types[1]
    dtype = _same_dtype(types)
    if len(x.shape) != 4 or len(w.shape) != 4:
        raise Invalid("conv2d ranks")
    nhwc = attrs.get("layout") == "NHWC"
    n, h, wd, c = x.shape if nhwc else (x.shape[0], x.shape[2], x.shape[3], x.shape[1])
    o, ci, kh, kw = w.shape
    groups = attrs.get("groups", 1)
    sh, sw = attrs.get("strides", (1, 1))
    top, left, bottom, right = attrs.get("padding", (0, 0, 0, 0))
    dh, dw = attrs.get("dilations", (1, 1))
    if c.size % groups or o.size % groups or ci.size * groups != c.size:
        raise Invalid("conv2d channels")
    if len(types) == 3 and sizes(types[2].shape) != (o.size,):
        raise Invalid("conv2d bias")
    oh = _window(h.size, kh.size, sh, dh, top + bottom)
    ow = _window(wd.size, kw.size, sw, dw, left + right)
    if oh < 1 or ow < 1:
        raise Invalid("conv2d window")
    return [TypeInfo((n, Dim(oh), Dim(ow), o) if nhwc else (n, o, Dim(oh), Dim(ow)), dtype)]


def _pool(types, attrs, recipe, table):
    x = types[0]
    if len(x.shape) != 4:
        raise Invalid("pool rank")
    nhwc = attrs.get("layout") == "NHWC"
    n, h, w, c = x.shape if nhwc else (x.shape[0], x.shape[2], x.shape[3], x.shape[1])
    kh, kw = attrs["kernel"]
    sh, sw = attrs.get("strides", (1, 1))
    top, left, bottom, right = attrs.get("padding", (0, 0, 0, 0))
    if max(top, bottom) >= kh or max(left, right) >= kw:
        raise Invalid("a window of padding only")
    oh = _window(h.size, kh, sh, 1, top + bottom)
    ow = _window(w.size, kw, sw, 1, left + right)
    if oh < 1 or ow < 1:
        raise Invalid("pool window")
    return [TypeInfo((n, Dim(oh), Dim(ow), c) if nhwc else (n, c, Dim(oh), Dim(ow)), x.dtype)]


def _reduction(types, attrs, recipe, table):
    x = types[0]
    rank = len(x.shape)
    axes = sorted({_axis(a, rank) for a in attrs["axes"]})
    if len(axes) != len(attrs["axes"]) or not axes:
        raise Invalid("reduction axes")
    if any(x.shape[a].size == 0 for a in axes):
        raise Invalid("empty reduction")
    if attrs.get("keepdims", False):
        shape = tuple(Dim(1) if i in axes else d for i, d in enumerate(x.shape))
    else:
        shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    return [TypeInfo(shape, x.dtype)]


def _softmax(types, attrs, recipe, table):
    _axis(attrs.get("axis", -1), len(types[0].shape))
    return [types[0]]


def _normalization(types, attrs, recipe, table):
    x = types[0]
    _same_dtype(types)
    axis = _axis(attrs.get("axis", -1), len(x.shape))
    for param in types[1:]:
        if sizes(param.shape) != sizes(x.shape[axis:]):
            raise Invalid("normalization parameter shape")
    return [x]


def _attention(types, attrs, recipe, table):
    q, k, v = types[:3]
    dtype = _same_dtype(types)
    if not 2 <= len(q.shape) == len(k.shape) == len(v.shape):
        raise Invalid("attention ranks")
    if not sizes(q.shape[:-2]) == sizes(k.shape[:-2]) == sizes(v.shape[:-2]):
        raise Invalid("attention batch")
    if q.shape[-1].size != k.shape[-1].size or k.shape[-2].size != v.shape[-2].size:
        raise Invalid("attention dims")
    if k.shape[-2].size == 0:
        raise Invalid("attention over no keys")  # a softmax over nothing
    if q.shape[-1].size == 0 and "scale" not in attrs:
        raise Invalid("attention of no head dims")  # the default scale 1/sqrt(0)
    scores = q.shape[:-1] + (k.shape[-2],)
    if len(types) == 4 and sizes(broadcast(types[3].shape, scores)) != sizes(scores):
        raise Invalid("attention mask")
    return [TypeInfo(q.shape[:-1] + (v.shape[-1],), dtype)]


def _transpose(types, attrs, recipe, table):
    x = types[0]
    perm = attrs["perm"]
    if sorted(perm) != list(range(len(x.shape))):
        raise Invalid("not a permutation")
    return [TypeInfo(tuple(x.shape[p] for p in perm), x.dtype)]


def _reshape(types, attrs, recipe, table):
    """Reshapes by a rule that survives shrinking: merge two adjacent dims,
    split one by a factor, insert or drop a size-1 dim, or flatten."""
    x = types[0]
    shape = list(x.shape)
    rule = recipe["rule"]
    if rule[0] == "merge":
        i = rule[1]
        if i + 1 >= len(shape):
            raise Invalid("reshape merge")
        shape[i:i + 2] = [Dim(shape[i].size * shape[i + 1].size)]
    elif rule[0] == "split":
        i, factor = rule[1], rule[2]
        if i >= len(shape) or factor < 1 or shape[i].size % factor:
            raise Invalid("reshape split")
        shape[i:i + 1] = [Dim(shape[i].size // factor), Dim(factor)]
    elif rule[0] == "unsqueeze":
        shape.insert(min(rule[1], len(shape)), Dim(1))
    elif rule[0] == "squeeze":
        i = rule[1]
        if i >= len(shape) or shape[i].size != 1:
            raise Invalid("reshape squeeze")
        del shape[i]
    elif rule[0] == "flatten":
        shape = [Dim(elements(x.shape))]
    else:
        raise Invalid(f"reshape rule {rule}")
    if len(shape) > MAX_RANK + 1:
        raise Invalid("reshape rank")
    return [TypeInfo(tuple(shape), x.dtype)]


def _broadcast_to(types, attrs, recipe, table):
    """Broadcasts to new leading dims (symbols) and expands size-1 dims."""
    x = types[0]
    lead = tuple(Dim(table[s], s) for s in recipe["lead"])
    shape = list(x.shape)
    for index, sym in recipe["expand"]:
        if index >= len(shape) or shape[index].size != 1:
            raise Invalid("broadcast_to expand")
        shape[index] = Dim(table[sym], sym)
    return [TypeInfo(lead + tuple(shape), x.dtype)]


def _concat(types, attrs, recipe, table):
    dtype = _same_dtype(types)
    rank = len(types[0].shape)
    if any(len(t.shape) != rank for t in types):
        raise Invalid("concat ranks")
    axis = _axis(attrs["axis"], rank)
    for t in types[1:]:
        for d in range(rank):
            if d != axis and t.shape[d].size != types[0].shape[d].size:
                raise Invalid("concat dims")
    shape = list(types[0].shape)
    shape[axis] = Dim(sum(t.shape[axis].size for t in types))
    return [TypeInfo(tuple(shape), dtype)]


def _slice(types, attrs, recipe, table):
    """`limits` are rendered from the recipe's distances to the end."""
    x = types[0]
    shape = []
    limits = []
    for d, start, from_end, stride in zip(x.shape, attrs["starts"], recipe["from_end"],
                                           attrs.get("strides", (1,) * len(x.shape))):
        limit = d.size - from_end
        if not 0 <= start <= limit or stride < 1:
            raise Invalid("slice bounds")
        limits.append(limit)
        shape.append(Dim(-(-(limit - start) // stride)))
    if len(attrs["starts"]) != len(x.shape):
        raise Invalid("slice rank")
    attrs["limits"] = tuple(limits)
    return [TypeInfo(tuple(shape), x.dtype)]


def _pad(types, attrs, recipe, table):
    x = types[0]
    if len(attrs["low"]) != len(x.shape) or len(attrs["high"]) != len(x.shape):
        raise Invalid("pad rank")
    return [TypeInfo(tuple(Dim(d.size + lo + hi) if lo or hi else d
                           for d, lo, hi in zip(x.shape, attrs["low"], attrs["high"])), x.dtype)]


def _affine_parameters(x: TypeInfo, scale: TypeInfo, zero_point: TypeInfo, attrs) -> None:
    """nn.quantize's and nn.dequantize's scale (f32) and zero point: rank
    0, or one per slice along `axis`."""
    if scale.dtype != "f32" or zero_point.dtype not in ("i8", "ui8"):
        raise Invalid("scale or zero point type")
    if "axis" in attrs:
        size = x.shape[_axis(attrs["axis"], len(x.shape))].size
        if sizes(scale.shape) != (size,) or sizes(zero_point.shape) != (size,):
            raise Invalid("parameters along the axis")
    elif scale.shape or zero_point.shape:
        raise Invalid("per-tensor parameters are scalars")


def _quantize(types, attrs, recipe, table):
    x, scale, zero_point = types
    if x.dtype != "f32":
        raise Invalid("nn.quantize takes f32")
    _affine_parameters(x, scale, zero_point, attrs)
    return [TypeInfo(x.shape, zero_point.dtype)]


def _dequantize(types, attrs, recipe, table):
    q, scale, zero_point = types
    if q.dtype != zero_point.dtype:
        raise Invalid("zero point type")
    _affine_parameters(q, scale, zero_point, attrs)
    return [TypeInfo(q.shape, "f32")]


def _constant(types, attrs, recipe, table):
    return [TypeInfo(tuple(Dim(table[s], s) if isinstance(s, str) else Dim(s)
                           for s in recipe["shape"]), recipe["dtype"])]


UNARY = ("neg", "abs", "exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "relu", "erf", "silu",
         "gelu")
BINARY = ("add", "sub", "mul", "div", "maximum", "minimum", "pow")
REDUCTIONS = ("reduce_sum", "reduce_max", "reduce_min", "reduce_mean")

RULES: dict[str, Callable] = {f"nn.{k}": _unary for k in UNARY}
RULES.update({f"nn.{k}": _binary for k in BINARY})
RULES.update({f"nn.{k}": _reduction for k in REDUCTIONS})
RULES.update({
    "nn.compare": _compare, "nn.select": _select, "nn.cast": _cast, "nn.matmul": _matmul,
    "nn.conv2d": _conv2d, "nn.max_pool2d": _pool, "nn.avg_pool2d": _pool,
    "nn.softmax": _softmax, "nn.log_softmax": _softmax, "nn.layer_norm": _normalization,
    "nn.rms_norm": _normalization, "nn.attention": _attention, "nn.transpose": _transpose,
    "nn.reshape": _reshape, "nn.broadcast_to": _broadcast_to, "nn.concat": _concat,
    "nn.slice": _slice, "nn.pad": _pad, "arith.constant": _constant,
    "nn.quantize": _quantize, "nn.dequantize": _dequantize,
})


def plugin_unary_ops() -> tuple[str, ...]:
    """The unary elementwise nn ops defined in the scalar form besides
    Lamina's own: those of the plugins loaded (`--load-plugin`), which the
    generator draws with the built-in unary ops; their rule is `_unary`."""
    from lamina.dialects import nn
    found = tuple(sorted(name for name, op_class in nn.NN.ops.items()
                         if issubclass(op_class, nn.UnaryElementwiseOp)
                         and op_class.scalar is not None and name not in UNARY))
    for name in found:
        RULES.setdefault(f"nn.{name}", _unary)
    return found


def plugin_range(kind: str, lo: float, hi: float) -> tuple[float, float]:
    """The range of a plugin op's values on [lo, hi], from its NumPy
    reference (the scalar form) on 1025 points of it, in float64."""
    import numpy as np
    from lamina.dialects.opdef import lookup_op
    values = lookup_op(f"nn.{kind}").detached().reference(np.linspace(lo, hi, 1025))
    if not np.isfinite(values).all():
        raise Invalid(f"nn.{kind} is not finite on [{lo}, {hi}]")
    return float(values.min()), float(values.max())


# The nn ops the generator does not make: fusion groups come from nn-fuse;
# the generator's values are floats in tracked ranges, and the ops that
# make or take integer indices (gather, iota, cumsum, argmax) are checked
# by their own numerics tests (test_nn_to_linalg_numerics) instead, as
# are quantize and dequantize (test_quantize): their i8/ui8 values would
# need an exact integer oracle the generator's tracked float ranges are not.
# So are the ops on integers' bits (bitwise and/or/xor, shifts), and
# nn.remainder: it jumps by the divisor where the dividend crosses a
# multiple of it, so an operand rounded differently by two computations
# upstream would make a difference of a whole divisor that is no defect.
NOT_GENERATED = ("nn.fused", "nn.gather", "nn.iota", "nn.cumsum", "nn.argmax",
                 "nn.bitwise_and", "nn.bitwise_or",
                 "nn.bitwise_xor", "nn.shift_left", "nn.shift_right", "nn.remainder")


def reduction_length(op: Op, types: dict[str, TypeInfo]) -> int:
    """How many terms one result element of `op` sums (1 for ops that do
    not reduce)."""
    operand = [types[o] for o in op.operands]
    kind = op.kind
    if kind == "nn.matmul":
        return operand[0].shape[-1].size
    if kind == "nn.conv2d":
        _, ci, kh, kw = sizes(operand[1].shape)
        return ci * kh * kw
    if kind in ("nn.avg_pool2d", "nn.max_pool2d"):
        return math.prod(op.attrs["kernel"])
    if kind in ("nn.reduce_sum", "nn.reduce_mean"):
        rank = len(operand[0].shape)
        return math.prod(operand[0].shape[a % rank].size for a in op.attrs["axes"])
    if kind in ("nn.softmax", "nn.log_softmax"):
        return operand[0].shape[op.attrs.get("axis", -1)].size
    if kind in ("nn.layer_norm", "nn.rms_norm"):
        return elements(operand[0].shape[op.attrs.get("axis", -1):])
    if kind == "nn.attention":
        return operand[0].shape[-1].size * operand[1].shape[-2].size
    return 1


# ---------------------------------------------------------------------------
# The generator.


@dataclass
class Value:
    """A value in the generator's pool: its type, an interval holding its
    elements, whether it was computed exactly from the inputs (no
    rounding), and per dim whether its elements vary along that dim."""

    name: str
    type: TypeInfo
    lo: float
    hi: float
    exact: bool = False
    varies: tuple[bool, ...] = ()

    @property
    def magnitude(self) -> float:
        return max(abs(self.lo), abs(self.hi))


class Generator:
    """Builds one program from a random source; see the module docstring."""

    # How often each op family is drawn.
    WEIGHTS = {"unary": 14, "binary": 14, "compare_select": 4, "cast": 4, "matmul": 6,
               "conv2d": 4, "pooling": 3, "reduction": 7, "softmax": 4, "normalization": 4,
               "attention": 3, "transpose": 3, "reshape": 3, "broadcast_to": 2, "concat": 3,
               "slice": 3, "pad": 3, "constant": 2}
    # A degenerate program draws more of the ops that make empty values.
    DEGENERATE_WEIGHTS = {"slice": 12, "pad": 5, "concat": 5}

    def __init__(self, rng: random.Random, dtype: str, max_ops: int, profile: str = "default"):
        self.rng = rng
        self.dtype = dtype
        self.max_ops = max_ops
        self.profile = profile
        self.size_choices = DEGENERATE_SIZES if profile == "degenerate" else SIZES
        self.pool: list[Value] = []
        self.inputs: dict[str, tuple[tuple[str, ...], str]] = {}
        self.sizes: dict[str, int] = {}
        self.ops: list[Op] = []
        self.counter = 0
        self.uses: dict[str, int] = {}
        self.unary_kinds = UNARY + plugin_unary_ops()

    # -- names, sizes, inputs --------------------------------------------------

    def fresh(self, prefix: str = "v") -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def size_symbol(self, size: int | None = None) -> Dim:
        if size is None:
            size = self.rng.choice(self.size_choices)
        sym = f"s{len(self.sizes)}"
        self.sizes[sym] = size
        return Dim(size, sym)

    def new_shape(self, rank: int | None = None, budget: int = MAX_ELEMENTS) -> Shape:
        rank = self.rng.choice([0, 1, 2, 2, 3, 3, 4]) if rank is None else rank
        dims = []
        for _ in range(rank):
            left = budget // max(1, elements(tuple(dims)))
            size = self.rng.choice([s for s in self.size_choices if s <= max(1, left // 2)]
                                   or [1])
            dims.append(self.size_symbol(size))
        self.rng.shuffle(dims)
        return tuple(dims)

    def new_input(self, shape: Shape, dtype: str | None = None) -> Value:
        """A new argument of `shape` (dims without a symbol get one)."""
        dtype = dtype or self.dtype
        dims = tuple(d if d.sym else self.size_symbol(d.size) for d in shape)
        name = self.fresh("arg")
        self.inputs[name] = (tuple(d.sym for d in dims), dtype)
        value = Value(name, TypeInfo(dims, dtype), -1.0, 1.0, exact=True,
                      varies=tuple(d.size > 1 for d in dims))
        self.pool.append(value)
        return value

    # -- ops -----------------------------------------------------------------

    def emit(self, kind: str, operands: Sequence[Value], lo: float, hi: float,
             attrs: dict | None = None, recipe: dict | None = None, exact: bool = False,
             varies: Sequence[bool] | None = None) -> Value:
        """Adds an op with one result; raises Invalid if its rule fails."""
        attrs, recipe = dict(attrs or {}), dict(recipe or {})
        result_type = RULES[kind]([v.type for v in operands], attrs, recipe, self.sizes)[0]
        if elements(result_type.shape) > MAX_ELEMENTS:
            raise Invalid("too many elements")
        if result_type.dtype in ("f16", "bf16") and max(abs(lo), abs(hi)) > 6e4:
            raise Invalid("out of the element type's range")
        name = self.fresh()
        self.ops.append(Op(kind, [v.name for v in operands], [name], attrs, recipe))
        for v in operands:
            self.uses[v.name] = self.uses.get(v.name, 0) + 1
        if varies is None:
            varies = self.broadcast_varies(operands, result_type.shape)
        value = Value(name, result_type, min(lo, hi), max(lo, hi), exact, tuple(varies))
        self.pool.append(value)
        return value

    @staticmethod
    def broadcast_varies(operands: Sequence[Value], shape: Shape) -> tuple[bool, ...]:
        rank = len(shape)
        out = [False] * rank
        for v in operands:
            offset = rank - len(v.type.shape)
            for i, flag in enumerate(v.varies):
                if 0 <= i + offset < rank and v.type.shape[i].size == shape[i + offset].size:
                    out[i + offset] = out[i + offset] or flag
        return tuple(out)

    def constant(self, value: float, shape: Shape = (), dtype: str | None = None) -> Value:
        dtype = dtype or self.dtype
        recipe = {"value": float(value), "dtype": dtype,
                  "shape": tuple(d.sym if d.sym else d.size for d in shape)}
        return self.emit("arith.constant", [], value, value, recipe=recipe, exact=True,
                         varies=(False,) * len(shape))

    # -- conditioning ----------------------------------------------------------

    def bounded(self, v: Value, limit: float) -> Value:
        """`v`, or `v` squashed so that its magnitude is at most `limit`."""
        if v.magnitude <= limit:
            return v
        if self.rng.random() < 0.5 or limit < 1:
            squashed = self.emit("nn.tanh", [v], math.tanh(v.lo), math.tanh(v.hi))
            return squashed if limit >= 1 else self.bounded(squashed, limit)
        factor = 2.0 ** -math.ceil(math.log2(v.magnitude / limit))
        c = self.constant(factor)
        return self.emit("nn.mul", [v, c], v.lo * factor, v.hi * factor)

    def positive(self, v: Value, floor: float, limit: float = 4.0) -> Value:
        """`v`, or `abs(v) + floor` (bounded), so that it is >= `floor`."""
        if v.lo >= floor and v.hi <= limit + floor:
            return v
        v = self.bounded(v, limit)
        a = self.emit("nn.abs", [v], 0.0, v.magnitude)
        c = self.constant(floor)
        return self.emit("nn.add", [a, c], floor, a.hi + floor)

    # -- choosing operands -----------------------------------------------------

    def pick(self, accept: Callable[[Value], bool] = lambda v: True,
             dtype: str | None = None) -> Value | None:
        """A value of the pool (recent ones more often), or None."""
        dtype = dtype or self.dtype
        candidates = [v for v in self.pool if v.type.dtype == dtype and accept(v)]
        if not candidates:
            return None
        weights = [1.0 + i for i in range(len(candidates))]
        return self.rng.choices(candidates, weights)[0]

    def operand(self, accept: Callable[[Value], bool] = lambda v: True,
                rank: int | None = None) -> Value:
        """A pool value that `accept`s (most often), or a new input; a new
        input is only what `accept` takes when its rank decides it."""
        found = self.pick(lambda v: accept(v) and (rank is None or len(v.type.shape) == rank))
        if found is not None and self.rng.random() < 0.85:
            return found
        for _ in range(8):
            value_rank = rank if rank is not None else self.rng.choice([0, 1, 2, 2, 3, 3, 4])
            probe = Value("", TypeInfo(tuple(Dim(2) for _ in range(value_rank)), self.dtype),
                          -1.0, 1.0, True, (True,) * value_rank)
            if accept(probe):
                return self.new_input(self.new_shape(value_rank))
        return self.new_input(self.new_shape(rank))

    def partner(self, v: Value, allow_self: bool = True) -> Value:
        """An operand that broadcasts with `v`: `v` itself, a pool value of
        a compatible shape, or a new input of a shape derived from `v`'s."""
        r = self.rng.random()
        if r < 0.15 and allow_self:
            return v
        if r < 0.5:
            found = self.pick(lambda w: w is not v and _broadcasts(w.type.shape, v.type.shape))
            if found is not None:
                return found
        shape = list(v.type.shape)
        if shape and self.rng.random() < 0.4:
            shape = shape[self.rng.randrange(len(shape) + 1):]
        shape = [Dim(1) if self.rng.random() < 0.3 else d for d in shape]
        if self.rng.random() < 0.15 and len(shape) < MAX_RANK:
            shape = [Dim(1)] + shape  # a partner of higher rank broadcasts the other way
        return self.new_input(tuple(shape))

    # -- op families -----------------------------------------------------------

    def unary(self):
        kind = self.rng.choice(self.unary_kinds)
        v = self.operand()
        if kind not in UNARY:
            v = self.bounded(v, 8.0)
            self.emit(f"nn.{kind}", [v], *plugin_range(kind, v.lo, v.hi))
            return
        if kind in ("log", "sqrt", "rsqrt"):
            v = self.positive(v, 0.25)
        elif kind == "exp":
            v = self.bounded(v, 4.0)
        else:
            v = self.bounded(v, 16.0)
        lo, hi = v.lo, v.hi
        ranges = {
            "neg": lambda: (-hi, -lo),
            "abs": lambda: (0.0 if lo <= 0 <= hi else min(abs(lo), abs(hi)), v.magnitude),
            "exp": lambda: (math.exp(lo), math.exp(hi)),
            "log": lambda: (math.log(lo), math.log(hi)),
            "sqrt": lambda: (math.sqrt(lo), math.sqrt(hi)),
            "rsqrt": lambda: (1 / math.sqrt(hi), 1 / math.sqrt(lo)),
            "tanh": lambda: (math.tanh(lo), math.tanh(hi)), "sigmoid": lambda: (0.0, 1.0),
            "relu": lambda: (max(lo, 0.0), max(hi, 0.0)),
            "erf": lambda: (math.erf(lo), math.erf(hi)),
            "silu": lambda: (min(lo, -0.3), max(hi, 0.0)),
            "gelu": lambda: (min(lo, -0.2), max(hi, 0.0)),
        }
        attrs = {}
        if kind == "gelu" and self.rng.random() < 0.5:
            attrs["approximate"] = self.rng.choice(["none", "tanh"])
        exact = v.exact and kind in ("neg", "abs", "relu")
        self.emit(f"nn.{kind}", [v], *ranges[kind](), attrs=attrs, exact=exact)

    def binary(self):
        kind = self.rng.choice(BINARY)
        lhs = self.bounded(self.operand(), 16.0)
        rhs = self.bounded(self.partner(lhs), 16.0)
        if kind == "div":
            rhs = self.positive(rhs, 0.5)
        if kind == "pow":
            lhs = self.positive(lhs, 0.25, limit=3.0)
            rhs = self.bounded(rhs, 2.0)
        corners = [(a, b) for a in (lhs.lo, lhs.hi) for b in (rhs.lo, rhs.hi)]
        op = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
              "div": lambda a, b: a / b, "maximum": max, "minimum": min,
              "pow": lambda a, b: a ** b}[kind]
        values = [op(a, b) for a, b in corners]
        exact = lhs.exact and rhs.exact and kind in ("maximum", "minimum")
        if rhs is lhs and kind == "sub":
            values = [0.0]
        self.emit(f"nn.{kind}", [lhs, rhs], min(values), max(values), exact=exact)

    def compare_select(self):
        # Compared values are exact (no rounding), so that no element is
        # on different sides of the comparison in different computations.
        lhs = self.operand(lambda v: v.exact)
        if not lhs.exact:
            lhs = self.new_input(lhs.type.shape)
        rhs = self.partner(lhs)
        if not rhs.exact:
            rhs = self.new_input(rhs.type.shape)
        predicate = self.rng.choice(["eq", "ne", "lt", "le", "gt", "ge"])
        cond = self.emit("nn.compare", [lhs, rhs], 0, 1, attrs={"predicate": predicate},
                         exact=True)
        if self.rng.random() < 0.8:
            a = self.bounded(self.partner(cond_as_float_shape(self, cond), allow_self=False), 16.0)
            b = self.bounded(self.partner(a), 16.0)
            self.emit("nn.select", [cond, a, b], min(a.lo, b.lo), max(a.hi, b.hi),
                      exact=a.exact and b.exact)

    def cast(self):
        r = self.rng.random()
        if r < 0.25:
            # float -> i1 -> float: only exact values (inputs are never 0).
            v = self.operand(lambda v: v.exact)
            if not v.exact:
                v = self.new_input(v.type.shape)
            flag = self.emit("nn.cast", [v], 0, 1, recipe={"to": "i1"}, exact=True)
            self.emit("nn.cast", [flag], 0, 1, recipe={"to": self.dtype}, exact=True)
            return
        target = self.rng.choice([d for d in FLOATS if d != self.dtype])
        v = self.bounded(self.operand(), 16.0)
        there = self.emit("nn.cast", [v], v.lo, v.hi, recipe={"to": target})
        if self.rng.random() < 0.7:
            # Computed on in the other type (with a value of that type,
            # when the pool has one), then cast back.
            other = self.pick(dtype=target, accept=lambda w: w is not there and _broadcasts(
                w.type.shape, there.type.shape))
            if other is not None and self.rng.random() < 0.5:
                if other.magnitude > 16:
                    other = self.emit("nn.tanh", [other], -1.0, 1.0)
                there = self.emit("nn.add", [there, other], there.lo + other.lo,
                                  there.hi + other.hi)
            self.emit("nn.cast", [there], there.lo, there.hi, recipe={"to": self.dtype})

    def matmul(self):
        lhs = self.operand(lambda v: len(v.type.shape) >= 2)
        if len(lhs.type.shape) < 2:
            lhs = self.new_input(self.new_shape(self.rng.choice([2, 2, 3])))
        lhs = self.bounded(lhs, 4.0)
        k = lhs.type.shape[-1]
        n = self.size_symbol(self.rng.choice([s for s in self.size_choices if s <= 33]))
        batch = lhs.type.shape[:-2]
        if batch and self.rng.random() < 0.3:
            batch = batch[self.rng.randrange(len(batch) + 1):]
        batch = tuple(Dim(1) if self.rng.random() < 0.2 else d for d in batch)
        found = self.pick(lambda v: len(v.type.shape) >= 2 and v.type.shape[-2].size == k.size
                          and _broadcasts(v.type.shape[:-2], lhs.type.shape[:-2]))
        rhs = found if found is not None and self.rng.random() < 0.5 else \
            self.new_input(batch + (k, n))
        rhs = self.bounded(rhs, 4.0)
        bound = k.size * lhs.magnitude * rhs.magnitude
        attrs = {}
        if lhs.type.dtype == "f32" and self.rng.random() < 0.15:
            attrs["precision"] = "tf32"
        self.emit("nn.matmul", [lhs, rhs], -bound, bound, attrs=attrs)

    def conv2d(self):
        x = self.operand(lambda v: len(v.type.shape) == 4 and v.type.shape[2].size >= 2
                         and v.type.shape[3].size >= 2)
        if len(x.type.shape) != 4:
            x = self.new_input((self.size_symbol(self.rng.choice([1, 1, 2])),
                                self.size_symbol(self.rng.choice([1, 2, 3, 4, 5])),
                                self.size_symbol(self.rng.choice([3, 5, 7, 8, 11])),
                                self.size_symbol(self.rng.choice([3, 4, 7, 9, 13]))))
        x = self.bounded(x, 4.0)
        # A channels-last convolution (as the CPU's layout stage writes
        # them) takes the same tensor as NHWC.
        nhwc = self.rng.random() < 0.25
        n, c, h, w = x.type.shape
        if nhwc:
            n, h, w, c = x.type.shape
        divisors = [g for g in range(1, c.size + 1) if c.size % g == 0] or [1]  # c = 0: 1
        groups = self.rng.choice(divisors) if self.rng.random() < 0.3 else 1
        per_group = self.rng.choice([1, 2, 3])
        o = self.size_symbol(groups * per_group)
        kh, kw = self.rng.choice([1, 2, 3]), self.rng.choice([1, 2, 3])
        attrs = {}
        if self.rng.random() < 0.4:
            attrs["strides"] = (self.rng.choice([1, 2]), self.rng.choice([1, 2, 3]))
        if self.rng.random() < 0.4:
            attrs["padding"] = tuple(self.rng.choice([0, 0, 1, 2]) for _ in range(4))
        if self.rng.random() < 0.3:
            attrs["dilations"] = (self.rng.choice([1, 2]), self.rng.choice([1, 2]))
        if groups > 1:
            attrs["groups"] = groups
        if nhwc:
            attrs["layout"] = "NHWC"
        weight = self.new_input((o, self.size_symbol(c.size // groups), self.size_symbol(kh),
                                 self.size_symbol(kw)))
        operands = [x, weight]
        if self.rng.random() < 0.5:
            operands.append(self.new_input((o,)))
        terms = (c.size // groups) * kh * kw
        bound = terms * x.magnitude + (1 if len(operands) == 3 else 0)
        self.emit("nn.conv2d", operands, -bound, bound, attrs=attrs)

    def pooling(self):
        x = self.operand(lambda v: len(v.type.shape) == 4)
        if len(x.type.shape) != 4:
            x = self.new_input((self.size_symbol(1), self.size_symbol(self.rng.choice([1, 2, 3])),
                                self.size_symbol(self.rng.choice([2, 5, 8, 9])),
                                self.size_symbol(self.rng.choice([3, 4, 7, 13]))))
        x = self.bounded(x, 16.0)
        kernel = (self.rng.choice([1, 2, 3]), self.rng.choice([1, 2, 3]))
        attrs = {"kernel": kernel}
        if self.rng.random() < 0.5:
            attrs["strides"] = (self.rng.choice([1, 2]), self.rng.choice([1, 2, 3]))
        padded = False
        if self.rng.random() < 0.4:
            attrs["padding"] = (self.rng.randrange(kernel[0]), self.rng.randrange(kernel[1]),
                                self.rng.randrange(kernel[0]), self.rng.randrange(kernel[1]))
            padded = any(attrs["padding"])
        kind = self.rng.choice(["nn.max_pool2d", "nn.avg_pool2d"])
        if self.rng.random() < 0.25:
            attrs["layout"] = "NHWC"
        lo, hi = x.lo, x.hi
        if kind == "nn.avg_pool2d" and padded:
            lo, hi = min(lo, 0.0), max(hi, 0.0)
        self.emit(kind, [x], lo, hi, attrs=attrs)

    def reduction(self):
        kind = self.rng.choice(REDUCTIONS)
        x = self.operand(lambda v: len(v.type.shape) >= 1)
        if not x.type.shape:
            x = self.new_input(self.new_shape(self.rng.choice([1, 2, 3])))
        x = self.bounded(x, 4.0)
        rank = len(x.type.shape)
        count = self.rng.choice([1, 1, 1, 2]) if rank > 1 else 1
        axes = self.rng.sample(range(rank), min(count, rank))
        axes = tuple(a - rank if self.rng.random() < 0.3 else a for a in axes)
        attrs = {"axes": axes}
        if self.rng.random() < 0.4:
            attrs["keepdims"] = self.rng.random() < 0.7
        terms = math.prod(x.type.shape[a % rank].size for a in axes)
        lo, hi = x.lo, x.hi
        if kind == "reduce_sum":
            lo, hi = lo * terms if lo < 0 else lo, hi * terms if hi > 0 else hi
        self.emit(f"nn.{kind}", [x], lo, hi, attrs=attrs)

    def softmax(self):
        x = self.bounded(self.operand(lambda v: len(v.type.shape) >= 1), 16.0)
        if not x.type.shape:
            x = self.new_input(self.new_shape(2))
        rank = len(x.type.shape)
        attrs = {}
        if self.rng.random() < 0.6:
            attrs["axis"] = self.rng.randrange(-rank, rank)
        kind = self.rng.choice(["nn.softmax", "nn.log_softmax"])
        n = x.type.shape[attrs.get("axis", -1)].size
        lo, hi = (0.0, 1.0) if kind == "nn.softmax" else (-(x.hi - x.lo) - math.log(max(n, 1)) - 1, 0.0)
        self.emit(kind, [x], lo, hi, attrs=attrs)

    def normalization(self):
        def well_conditioned(v):
            return len(v.type.shape) >= 1 and v.varies and v.varies[-1]
        x = self.operand(well_conditioned)
        if not well_conditioned(x):
            x = self.new_input(self.new_shape(self.rng.choice([1, 2, 3])))
            if not well_conditioned(x):
                x = self.new_input(x.type.shape[:-1] + (self.size_symbol(self.rng.choice([3, 8, 17])),))
        x = self.bounded(x, 16.0)
        rank = len(x.type.shape)
        attrs = {}
        axis = -1
        if rank > 1 and self.rng.random() < 0.4:
            axis = self.rng.randrange(-rank, 0)
            attrs["axis"] = axis
        # A normalisation amplifies its input's rounding by up to
        # 1/sqrt(epsilon): in f16 and bf16 a small epsilon would make the
        # float64 reference differ by more than any tolerance.
        if self.dtype != "f32":
            attrs["epsilon"] = self.rng.choice([0.1, 0.5])
        elif self.rng.random() < 0.7:
            attrs["epsilon"] = self.rng.choice([1e-5, 1e-3, 1e-2, 0.5])
        normalized = x.type.shape[axis:]
        count = elements(normalized)
        gamma = self.new_input(normalized)
        kind = self.rng.choice(["nn.layer_norm", "nn.rms_norm"])
        operands = [x, gamma] + ([self.new_input(normalized)] if kind == "nn.layer_norm" else [])
        bound = math.sqrt(count) + 1
        self.emit(kind, operands, -bound, bound, attrs=attrs)

    def attention(self):
        q = self.operand(lambda v: 2 <= len(v.type.shape) <= 3)
        if not 2 <= len(q.type.shape) <= 3:
            q = self.new_input(self.new_shape(self.rng.choice([2, 3])))
        q = self.bounded(q, 4.0)
        batch, d = q.type.shape[:-2], q.type.shape[-1]
        sk = self.size_symbol(self.rng.choice([1, 2, 3, 5, 8, 13, 17]))
        dv = self.size_symbol(self.rng.choice([1, 2, 4, 7, 16]))
        k = self.new_input(batch + (sk, d))
        v = self.new_input(batch + (sk, dv))
        operands = [q, k, v]
        if self.rng.random() < 0.3:
            scores = q.type.shape[:-1] + (sk,)
            mask_shape = tuple(Dim(1) if self.rng.random() < 0.3 else s for s in scores)
            operands.append(self.new_input(mask_shape[self.rng.randrange(len(mask_shape)):]
                                           if self.rng.random() < 0.3 else mask_shape))
        attrs = {}
        if self.rng.random() < 0.4:
            attrs["causal"] = self.rng.random() < 0.7
        if self.rng.random() < 0.3:
            attrs["scale"] = self.rng.choice([0.125, 0.5, 1.0])
        self.emit("nn.attention", operands, -1.0, 1.0, attrs=attrs)

    def transpose(self):
        x = self.operand(lambda v: len(v.type.shape) >= 2)
        rank = len(x.type.shape)
        perm = list(range(rank))
        self.rng.shuffle(perm)
        self.emit("nn.transpose", [x], x.lo, x.hi, attrs={"perm": tuple(perm)}, exact=x.exact,
                  varies=tuple(x.varies[p] for p in perm))

    def reshape(self):
        x = self.operand(lambda v: len(v.type.shape) >= 1)
        rank = len(x.type.shape)
        rules = [("unsqueeze", self.rng.randrange(rank + 1))]
        if rank:
            rules.append(("flatten",))
        if rank >= 2:
            rules.append(("merge", self.rng.randrange(rank - 1)))
        for i, d in enumerate(x.type.shape):
            if d.size == 1:
                rules.append(("squeeze", i))
            factors = [f for f in range(2, d.size) if d.size % f == 0]
            if factors:
                rules.append(("split", i, self.rng.choice(factors)))
        rule = self.rng.choice(rules)
        varies = list(x.varies)
        if rule[0] == "merge":
            varies[rule[1]:rule[1] + 2] = [varies[rule[1]] or varies[rule[1] + 1]]
        elif rule[0] == "split":
            varies[rule[1]:rule[1] + 1] = [varies[rule[1]]] * 2
        elif rule[0] == "unsqueeze":
            varies.insert(rule[1], False)
        elif rule[0] == "squeeze":
            del varies[rule[1]]
        else:
            varies = [any(varies)]
        self.emit("nn.reshape", [x], x.lo, x.hi, recipe={"rule": rule}, exact=x.exact,
                  varies=varies)

    def broadcast_to(self):
        x = self.operand(lambda v: len(v.type.shape) < MAX_RANK)
        ones = [i for i, d in enumerate(x.type.shape) if d.size == 1]
        lead = tuple(self.size_symbol(self.rng.choice([2, 3, 5])).sym
                     for _ in range(self.rng.choice([0, 1]) if ones else 1))
        expand = tuple((i, self.size_symbol(self.rng.choice([2, 3, 4, 7])).sym) for i in ones
                       if self.rng.random() < 0.7)
        recipe = {"lead": lead, "expand": expand}
        varies = (False,) * len(lead) + tuple(
            flag and not any(i == e for e, _ in expand) for i, flag in enumerate(x.varies))
        self.emit("nn.broadcast_to", [x], x.lo, x.hi, recipe=recipe, exact=x.exact,
                  varies=varies)

    def concat(self):
        first = self.operand(lambda v: len(v.type.shape) >= 1)
        if not first.type.shape:
            first = self.new_input(self.new_shape(self.rng.choice([1, 2])))
        rank = len(first.type.shape)
        axis = self.rng.randrange(rank)
        operands = [first]
        for _ in range(self.rng.choice([1, 1, 2])):
            shape = list(first.type.shape)
            shape[axis] = self.size_symbol(self.rng.choice([1, 2, 3, 5]))
            same = self.pick(lambda v: v is not first and len(v.type.shape) == rank and all(
                v.type.shape[d].size == first.type.shape[d].size for d in range(rank) if d != axis))
            operands.append(same if same is not None and self.rng.random() < 0.4
                            else self.new_input(tuple(shape)))
        attrs = {"axis": axis - rank if self.rng.random() < 0.3 else axis}
        self.emit("nn.concat", operands, min(v.lo for v in operands),
                  max(v.hi for v in operands), attrs=attrs, exact=all(v.exact for v in operands))

    def slice(self):
        x = self.operand(lambda v: len(v.type.shape) >= 1)
        starts, from_end, strides = [], [], []
        empty = self.profile == "degenerate" and self.rng.random() < 0.7
        axis_of_empty = self.rng.randrange(len(x.type.shape))
        for axis, d in enumerate(x.type.shape):
            start = self.rng.randrange(d.size) if d.size > 1 and self.rng.random() < 0.5 else 0
            end = self.rng.randrange(d.size - start) if d.size - start > 1 and \
                self.rng.random() < 0.5 else 0
            if empty and axis == axis_of_empty:
                # Nothing along this axis: from the end of the axis, or from
                # anywhere up to a limit at the start.
                start = self.rng.choice([d.size, self.rng.randrange(d.size + 1)])
                end = d.size - start
            starts.append(start)
            from_end.append(end)
            strides.append(self.rng.choice([1, 1, 2, 3]))
        attrs = {"starts": tuple(starts)}
        if self.rng.random() < 0.6:
            attrs["strides"] = tuple(strides)
        result = self.emit("nn.slice", [x], x.lo, x.hi, attrs=attrs,
                           recipe={"from_end": tuple(from_end)}, exact=x.exact, varies=x.varies)
        result.varies = tuple(f and d.size > 1 for f, d in zip(x.varies, result.type.shape))

    def pad(self):
        x = self.operand(lambda v: len(v.type.shape) >= 1)
        rank = len(x.type.shape)
        low = tuple(self.rng.choice([0, 0, 1, 2]) for _ in range(rank))
        high = tuple(self.rng.choice([0, 0, 1, 3]) for _ in range(rank))
        attrs = {"low": low, "high": high}
        value = 0.0
        if self.rng.random() < 0.5:
            value = self.rng.choice([0.0, 1.0, -0.5, 2.0])
            attrs["value"] = value
        self.emit("nn.pad", [x], min(x.lo, value), max(x.hi, value), attrs=attrs,
                  exact=x.exact, varies=tuple(f or bool(lo or hi) for f, lo, hi
                                              in zip(x.varies, low, high)))

    def constant_op(self):
        """A constant used by an elementwise op (splats of several shapes)."""
        x = self.bounded(self.operand(), 16.0)
        shape = x.type.shape[self.rng.randrange(len(x.type.shape) + 1):]
        value = self.rng.choice([0.5, -1.0, 2.0, 0.25, 3.0])
        c = self.constant(value, tuple(Dim(1) if self.rng.random() < 0.5 else d for d in shape))
        kind = self.rng.choice(["nn.add", "nn.mul", "nn.maximum", "nn.sub"])
        corners = {"nn.add": (x.lo + value, x.hi + value), "nn.sub": (x.lo - value, x.hi - value),
                   "nn.mul": (x.lo * value, x.hi * value),
                   "nn.maximum": (max(x.lo, value), max(x.hi, value))}[kind]
        operands = [x, c] if self.rng.random() < 0.7 else [c, x]
        if kind == "nn.sub" and operands[0] is c:
            corners = (value - x.hi, value - x.lo)
        self.emit(kind, operands, *corners)

    def gemv(self):
        """A GPU-shaped matmul: M = 1 (a GEMV), K = 1 (an outer product) or
        both, 2-d or batched, with what the GPU targets fuse into its
        epilogue: a bias, relu or gelu, a cast to f32."""
        shape = self.rng.choice(["m1", "m1", "k1", "m1k1"])
        m = self.size_symbol(1 if shape.startswith("m1") else self.rng.choice([2, 5, 16, 33]))
        k = self.size_symbol(1 if shape.endswith("k1") else self.rng.choice([8, 16, 31, 64]))
        n = self.size_symbol(self.rng.choice([1, 8, 16, 40, 64]))
        batch = (self.size_symbol(self.rng.choice([2, 3])),) if self.rng.random() < 0.25 else ()
        if batch and batch[0].size * max(m.size * k.size, k.size * n.size,
                                         m.size * n.size) > MAX_ELEMENTS:
            batch = ()  # every operand and the result within MAX_ELEMENTS
        x = self.new_input(batch + (m, k))
        w = self.new_input(batch + (k, n))
        bound = k.size
        y = self.emit("nn.matmul", [x, w], -bound, bound)
        if self.rng.random() < 0.7:
            bias = self.new_input((n,))
            bound += 1
            y = self.emit("nn.add", [y, bias] if self.rng.random() < 0.8 else [bias, y],
                          -bound, bound)
        activation = self.rng.choice([None, "nn.relu", "nn.gelu"])
        if activation == "nn.relu":
            y = self.emit(activation, [y], 0.0, bound)
        elif activation == "nn.gelu":
            y = self.emit(activation, [y], -0.2, bound)
        if self.rng.random() < 0.3:
            self.emit("nn.cast", [y], y.lo, y.hi, recipe={"to": "f32"})

    def quantized(self):
        """A QDQ chain, as ONNX models and PyTorch 2 export write them: an
        f32 input quantised (int8 or uint8, per tensor) and dequantised, a
        matmul with a weight quantised per tensor or per column, an optional
        bias and relu, the result quantised (and dequantised again) or left
        a float; or an i8 x i8 -> i32 matmul of two quantised inputs. Scales
        are powers of two and K at most 64, so every value is exact in f32
        and in the float64 reference (products of at most 255 * 128, sums
        below 2^24): the quantised results must agree exactly."""
        rng = self.rng
        m = self.size_symbol(rng.choice([1, 2, 5, 16, 17]))
        k = self.size_symbol(rng.choice([1, 4, 16, 31, 64]))
        n = self.size_symbol(rng.choice([1, 3, 8, 17, 33]))
        activation_type = rng.choice(["i8", "ui8"])
        a_exponent, w_exponent = rng.choice([5, 6, 7]), rng.choice([5, 6, 7])
        a_zero = 0 if activation_type == "i8" else rng.choice([0, 64, 128])
        qa, a = self.quantize_input((m, k), a_exponent, a_zero, activation_type)
        per_column = rng.random() < 0.5
        qw, w = self.quantize_input((k, n), w_exponent, 0, "i8", axis=1 if per_column else None)
        if rng.random() < 0.2:
            qa8, _ = (qa, a) if activation_type == "i8" else self.quantize_input(
                (m, k), a_exponent, 0, "i8")
            bound = k.size * 128 * 128
            self.emit("nn.matmul", [qa8, qw], -bound, bound, exact=True)
            return
        bound = k.size * 255 * 128 * 2.0 ** -(a_exponent + w_exponent)
        y = self.emit("nn.matmul", [a, w], -bound, bound, exact=True)
        if rng.random() < 0.6:
            _, bias = self.quantize_input((n,), 7, 0, "i8")
            bound += 1.0
            y = self.emit("nn.add", [y, bias] if rng.random() < 0.8 else [bias, y], -bound,
                          bound, exact=True)
        if rng.random() < 0.5:
            y = self.emit("nn.relu", [y], 0.0, bound, exact=True)
        if rng.random() < 0.75:
            output_type = rng.choice(["i8", "ui8"])
            zero = 0 if output_type == "i8" else rng.choice([0, 128])
            exponent = max(0, math.ceil(math.log2(max(bound, 1.0) / 128)))
            scale = self.constant(2.0 ** exponent, (), "f32")
            zero_point = self.constant(float(zero), (), output_type)
            low, high = (-128, 127) if output_type == "i8" else (0, 255)
            q = self.emit("nn.quantize", [y, scale, zero_point], low, high, exact=True)
            if rng.random() < 0.5:
                self.emit("nn.dequantize", [q, scale, zero_point], (low - zero) * 2.0 ** exponent,
                          (high - zero) * 2.0 ** exponent, exact=True)

    def quantize_input(self, shape: Shape, exponent: int, zero: int, dtype: str,
                       axis: int | None = None) -> tuple[Value, Value]:
        """A new f32 input of `shape` quantised by scale 2^-exponent (per
        tensor, or the same scale and zero point per slice along `axis`)
        and dequantised: (the quantised value, the dequantised one)."""
        x = self.new_input(shape, "f32")
        parameters = () if axis is None else (x.type.shape[axis],)
        attrs = {} if axis is None else {"axis": axis}
        scale = self.constant(2.0 ** -exponent, parameters, "f32")
        zero_point = self.constant(float(zero), parameters, dtype)
        low, high = (-128, 127) if dtype == "i8" else (0, 255)
        q = self.emit("nn.quantize", [x, scale, zero_point], low, high, attrs=attrs, exact=True)
        step = 2.0 ** -exponent
        dequantized = self.emit("nn.dequantize", [q, scale, zero_point], (low - zero) * step,
                                (high - zero) * step, attrs=attrs, exact=True)
        return q, dequantized

    # -- the program -----------------------------------------------------------

    def build(self) -> Program:
        if self.profile in ("gemv", "quantized"):
            getattr(self, self.profile)()
            self.max_ops = max(self.max_ops, len(self.ops) + 1)
        for _ in range(self.rng.choice([1, 1, 2])):
            self.new_input(self.new_shape(budget=1024))
        weights_of = dict(self.WEIGHTS)
        if self.profile == "degenerate":
            weights_of.update(self.DEGENERATE_WEIGHTS)
        families = list(weights_of)
        weights = [weights_of[f] for f in families]
        target = self.rng.randint(1, self.max_ops)
        attempts = 0
        while len(self.ops) < target and attempts < 10 * self.max_ops:
            attempts += 1
            family = self.rng.choices(families, weights)[0]
            mark = (len(self.ops), len(self.pool), dict(self.inputs), dict(self.uses))
            try:
                getattr(self, family if family != "constant" else "constant_op")()
            except Invalid:
                # Undo the partial family (its conditioning ops and inputs).
                del self.ops[mark[0]:]
                del self.pool[mark[1]:]
                self.inputs, self.uses = mark[2], mark[3]
        computed = [v for v in self.pool if v.name not in self.inputs
                    and not v.name.startswith("arg") and v.type.dtype != "i1"
                    and not _is_constant(self, v)]
        outputs = [v.name for v in computed if not self.uses.get(v.name)]
        extra = [v.name for v in computed if v.name not in outputs]
        self.rng.shuffle(extra)
        outputs += extra[:self.rng.choice([0, 0, 1, 2])]
        if not outputs:
            outputs = [v.name for v in self.pool if v.type.dtype != "i1"][-1:]
        self.rng.shuffle(outputs)
        program = Program(dict(self.inputs), self.ops, outputs[:4], dict(self.sizes), 0)
        program = program.without_dead_code()
        program.types()  # every program verifies by construction
        return program


def cond_as_float_shape(gen: Generator, cond: Value) -> Value:
    """A float value shaped like `cond`, to choose select's branches by."""
    return Value(cond.name, TypeInfo(cond.type.shape, gen.dtype), 0, 1, True, cond.varies)


def _is_constant(gen: Generator, v: Value) -> bool:
    return any(op.kind == "arith.constant" and v.name in op.results for op in gen.ops)


def _broadcasts(a: Shape, b: Shape) -> bool:
    try:
        broadcast(a, b)
        return True
    except Invalid:
        return False


def program_profile(seed: int) -> str:
    """`default`, `degenerate`, `gemv` or `quantized`: which kind of program a seed
    gives (PROFILES), from a random stream of the seed's own."""
    draw = random.Random(f"profile {seed}").random()
    for profile, share in PROFILES:
        if draw < share:
            return profile
        draw -= share
    return "default"


def generate_program(seed: int, max_ops: int = 8, dtypes: Sequence[str] = FLOATS) -> Program:
    """The program of a seed: the same seed always gives the same program."""
    rng = random.Random(seed)
    dtype = rng.choice(list(dtypes))
    profile = program_profile(seed)
    if profile == "gemv":
        dtype = rng.choice([d for d in dtypes if d in ("f16", "bf16")] or list(dtypes))
    program = Generator(rng, dtype, max_ops, profile).build()
    program.seed = seed
    return program
