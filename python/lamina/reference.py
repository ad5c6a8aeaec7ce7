"""A NumPy interpreter of nn programs: the meaning compiled code is checked
against (`lamina-run --check`, numerics tests).

It runs `func.func` bodies made of the ops of Lamina's and users' dialects
(each through its op class's NumPy `reference`; an op with several results
returns a sequence of arrays; an op whose view has a `callee()`, such as
`nn.fused`, runs that function), `arith.constant` (dense tensors and
scalars), `func.call` and `func.return`. Any other op is reported at its
location.

    results = evaluate(module, [x, w], entry="main")
    report = compare(results[0], expected[0])    # worst error vs tolerance

With `precision="f64"` the interpreter keeps every float value in float64
instead of rounding it to its type after each op (casts still round to
their target): the exact meaning that compiled code in any precision is
compared against (the fuzzer's reference). An op whose results are empty
is not run; one whose reference cannot compute (a maximum over nothing)
is reported at the op.
"""

from __future__ import annotations

import math
import re
import warnings
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from mlir import ir

from lamina.diagnostics import CompileError
from lamina.dialects.opdef import lookup_op
from lamina.shapes import ShapeError, has_dynamic_types, op_result_shapes
from lamina.types import TensorType, VerifyError, element_type_name, numpy_dtype, type_view


def _array_type(t: ir.Type) -> tuple[tuple[int, ...], np.dtype]:
    if isinstance(t, ir.ShapedType):
        shaped = ir.ShapedType(t)
        return tuple(shaped.shape), numpy_dtype(str(shaped.element_type))
    return (), numpy_dtype(str(t))


_NUMBER = re.compile(r"0x[0-9A-Fa-f]+|[-+]?(?:inf|nan|\d[\d.]*(?:e[-+]?\d+)?)|true|false")


def constant_array(attr: ir.Attribute, t: ir.Type) -> np.ndarray:
    """A NumPy array of a dense elements attribute (or scalar attribute) of type `t`."""
    shape, dtype = _array_type(t)
    if isinstance(attr, ir.DenseElementsAttr):
        dense = ir.DenseElementsAttr(attr)
        if dense.is_splat:
            return np.full(shape, _scalar(dense.get_splat_value()), dtype)
        try:
            return np.array(attr).astype(dtype, copy=False).reshape(shape)
        except (RuntimeError, TypeError, ValueError):
            return _parse_dense(str(attr), shape, dtype)
    return np.array(_scalar(attr), dtype)


def _scalar(attr: ir.Attribute):
    if isinstance(attr, ir.BoolAttr):
        return ir.BoolAttr(attr).value
    if isinstance(attr, ir.IntegerAttr):
        return ir.IntegerAttr(attr).value
    if isinstance(attr, ir.FloatAttr):
        return ir.FloatAttr(attr).value
    raise ValueError(f"unsupported constant {attr}")


def _parse_dense(text: str, shape, dtype: np.dtype) -> np.ndarray:
    """Elements of types the buffer protocol does not cover (bf16), from
    their printed form; hex tokens are bit patterns."""
    body = text[text.index("<") + 1:].rsplit(" : ", 1)[0].strip().removesuffix(">")
    if body.startswith('"0x'):
        return np.frombuffer(bytes.fromhex(body[3:].removesuffix('"')), dtype) \
            .reshape(shape).copy()
    bits_type = np.dtype(f"u{dtype.itemsize}")
    values = []
    for token in _NUMBER.findall(body):
        if token.startswith("0x"):
            values.append(np.array(int(token, 16), bits_type).view(dtype))
        elif token in ("true", "false"):
            values.append(np.array(token == "true", dtype))
        else:
            values.append(np.array(float(token), np.float64).astype(dtype))
    return np.array(values, dtype).reshape(shape)


class Interpreter:
    """Evaluates the functions of a module on NumPy arrays, in the
    program's precision or (`precision="f64"`) in float64. `observe(op,
    arrays)`, if given, sees the results of every op it runs."""

    def __init__(self, module: ir.Module, precision: str | None = None, observe=None):
        if precision not in (None, "f64"):
            raise ValueError(f"precision must be None or 'f64', got {precision!r}")
        self.float64 = precision == "f64"
        self.observe = observe
        self.module = module
        self.functions = {}
        for op in module.body.operations:
            op = op.operation
            if op.name == "func.func":
                self.functions[ir.StringAttr(op.attributes["sym_name"]).value] = op

    def call(self, name: str, arguments: Sequence[np.ndarray]) -> list[np.ndarray]:
        """The results of function `name` on `arguments`."""
        if name not in self.functions:
            raise CompileError.at(self.module.operation.location, f"no function @{name}")
        func = self.functions[name]
        if not func.regions[0].blocks:
            raise CompileError.at(func.location, f"@{name} has no body to interpret")
        block = func.regions[0].blocks[0]
        if len(arguments) != len(block.arguments):
            raise CompileError.at(func.location, f"@{name} takes {len(block.arguments)} arguments, "
                                           f"got {len(arguments)}")
        if self.float64:
            arguments = [_widened(a) for a in arguments]
        values: dict[ir.Value, np.ndarray] = dict(zip(block.arguments, arguments))
        for op in block.operations:
            op = op.operation
            operands = [values[v] for v in op.operands]
            if op.name == "func.return":
                return operands
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                results = self._run(op, operands)
            if self.float64:
                results = [_widened(r) for r in results]
            if self.observe is not None:
                self.observe(op, results)
            values.update(zip(op.results, results))
        raise CompileError.at(func.location, f"@{name} does not end with func.return")

    def _run(self, op: ir.Operation, operands: list[np.ndarray]) -> list[np.ndarray]:
        types = [_array_type(r.type) for r in op.results]
        if has_dynamic_types(op):
            # The sizes of this call, by the op's rule (which rejects sizes
            # the compiled code would reject).
            try:
                shapes = op_result_shapes(op, [np.shape(a) for a in operands])
            except ShapeError as error:
                raise CompileError.at(op.location, error.message) from None
            types = [(shape if shape is not None else None, dtype)
                     for shape, (_, dtype) in zip(shapes, types)]
        if types and all(shape is not None and 0 in shape for shape, _ in types):
            return [np.empty(shape, dtype) for shape, dtype in types]
        op_class = lookup_op(op.name)
        if op_class is not None:
            try:
                view = op_class.from_operation(op)
                # An op that names a function to run (nn.fused) means a call of it.
                callee = getattr(view, "callee", None)
                if callee is not None:
                    results = self.call(callee(), operands)
                else:
                    results = view.run_reference(*operands)
                    if len(op.results) == 1:
                        results = [results]
            except (VerifyError, NotImplementedError) as error:
                raise CompileError.at(op.location, f"'{op.name}' op {error}") from None
            except (ArithmeticError, ValueError) as error:
                raise CompileError.at(op.location, f"'{op.name}' op has no reference value "
                                      f"for these operands: {error}") from None
            except Exception as error:  # a bug in a reference: still reported at the op
                raise CompileError.at(op.location, f"'{op.name}' op internal error in its "
                                      f"reference: {type(error).__name__}: {error}") from None
            arrays = []
            for value, (shape, dtype) in zip(results, types):
                value = np.asarray(value)
                if self.float64 and _is_float(value.dtype) and _is_float(dtype):
                    dtype = np.dtype(np.float64)
                value = value.astype(dtype, copy=False)
                arrays.append(value if shape is None else value.reshape(shape))
            return arrays
        if op.name == "arith.constant":
            return [constant_array(op.attributes["value"], op.results[0].type)]
        if op.name == "func.call":
            callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
            return self.call(callee, operands)
        raise CompileError.at(op.location, f"the reference interpreter cannot run '{op.name}' "
                                     "(it runs the ops of Lamina's dialects with a NumPy reference, "
                                     "arith.constant, func.call, func.return)")


def _is_float(dtype: np.dtype) -> bool:
    """True for NumPy's floats and ml_dtypes' bfloat16 (whose kind is `V`)."""
    return dtype.kind == "f" or dtype == numpy_dtype("bf16")


def _widened(array: np.ndarray) -> np.ndarray:
    """A float array as float64 (other arrays as they are)."""
    array = np.asarray(array)
    return array.astype(np.float64) if _is_float(array.dtype) else array


def evaluate(module: ir.Module, arguments: Sequence[np.ndarray],
             entry: str | None = None, precision: str | None = None) -> list[np.ndarray]:
    """The results of the entry function (default: as `lamina.compile`
    chooses it) on `arguments`, in the program's precision or in float64
    (`precision="f64"`)."""
    from lamina.runtime import find_entry
    func = find_entry(module, entry)
    return Interpreter(module, precision).call(ir.StringAttr(func.attributes["sym_name"]).value,
                                               list(arguments))


# ---------------------------------------------------------------------------
# Comparing results.

# (rtol, atol) per element type; atol is scaled by the largest magnitude
# of the expected values (at least 1), so that sums that cancel compare fairly.
TOLERANCES = {"f64": (1e-7, 1e-9), "f32": (1e-4, 1e-5), "f16": (1e-2, 2e-3),
              "bf16": (4e-2, 2e-2)}


# From the finest to the coarsest precision.
PRECISIONS = ("f64", "f32", "f16", "bf16")


def coarsest(*dtypes: str) -> str:
    """The least precise of float element types (others are ignored; the
    first one if none is a float)."""
    floats = [d for d in dtypes if d in PRECISIONS]
    return max(floats, key=PRECISIONS.index) if floats else dtypes[0]


def tolerance(dtype: str, reduction_length: int = 1) -> tuple[float, float]:
    """(rtol, atol) for an element type; integers and i1 compare exactly.
    A value that sums `reduction_length` terms gets more: rounding errors
    of a sum grow like the square root of its length (the table holds up
    to 16 terms)."""
    rtol, atol = TOLERANCES.get(dtype, (0.0, 0.0))
    growth = max(1.0, math.sqrt(max(reduction_length, 1) / 16))
    return rtol * growth, atol * growth


@dataclass
class Comparison:
    """How far `actual` is from `expected`: the largest absolute error, and
    the worst ratio of error to tolerance (<= 1 passes)."""

    max_abs_error: float
    worst_ratio: float
    rtol: float
    atol: float
    mismatches: int
    count: int

    @property
    def ok(self) -> bool:
        return self.mismatches == 0

    def __str__(self) -> str:
        verdict = "ok" if self.ok else f"MISMATCH ({self.mismatches} of {self.count} elements)"
        return (f"max abs error {self.max_abs_error:.3g}, worst error/tolerance "
                f"{self.worst_ratio:.3g} (rtol {self.rtol:g}, atol {self.atol:g}): {verdict}")


def compare(actual: np.ndarray, expected: np.ndarray, dtype: str | None = None,
            rtol: float | None = None, atol: float | None = None,
            scale: float | None = None) -> Comparison:
    """Compares two arrays (NaNs match NaNs) at the tolerance of `dtype`,
    by default the less precise of the two arrays' types: a result is
    held to the precision it was computed in, not to its reference's
    (an f16 result against a float64 reference compares as f16). `atol`
    is scaled by `scale`, by default the largest finite magnitude
    expected (at least 1)."""
    if dtype is None:
        dtype = coarsest(element_type_name(actual.dtype), element_type_name(expected.dtype))
    default_rtol, default_atol = tolerance(dtype)
    rtol = default_rtol if rtol is None else rtol
    atol = default_atol if atol is None else atol
    if actual.shape != expected.shape:
        return Comparison(float("inf"), float("inf"), rtol, atol, expected.size, expected.size)
    a = actual.astype(np.float64)
    e = expected.astype(np.float64)
    finite = np.isfinite(e)
    if scale is None:
        scale = max(1.0, float(np.max(np.abs(e[finite]))) if finite.any() else 1.0)
    same = (a == e) | (np.isnan(a) & np.isnan(e))
    with np.errstate(invalid="ignore"):
        error = np.where(same, 0.0, np.abs(a - e))
        error = np.where(np.isnan(error), np.inf, error)
        allowed = atol * scale + rtol * np.abs(np.where(finite, e, 0.0))
        ratio = np.where(error == 0, 0.0,
                         np.divide(error, allowed, out=np.full_like(error, np.inf),
                                   where=allowed > 0))
    count = int(e.size)
    return Comparison(float(error.max()) if count else 0.0, float(ratio.max()) if count else 0.0,
                      rtol, atol, int((ratio > 1).sum()), count)


# Where a weight enters: (op, operand index) -> the fan-in of that operand,
# from its type there (a transposed weight is seen at the matmul).
_WEIGHT_FAN_IN = {
    ("nn.matmul", 1): lambda t: t.shape[-2],                 # [..., K, N]: K
    ("nn.conv2d", 1): lambda t: math.prod(t.shape[1:]),      # OIHW: I x H x W
}
# Ops a weight passes through unchanged in its elements on the way to its use.
_LAYOUT_OPS = ("nn.transpose", "nn.reshape", "nn.cast", "nn.broadcast_to")


def _argument_fan_in(value: ir.Value, depth: int = 0) -> int | None:
    """The fan-in of the weight operand `value` reaches (through layout ops),
    or None when it reaches none."""
    for use in value.uses:
        op = use.owner
        name = op.name
        fan_in = _WEIGHT_FAN_IN.get((name, use.operand_number))
        if fan_in is not None:
            # A '?' fan-in (a weight of run-time size) is none known.
            return None if None in type_view(value.type).shape else max(
                1, fan_in(type_view(value.type)))
        if name == "nn.conv2d" and use.operand_number == 2:   # a bias: its weight's fan-in
            return max(1, math.prod(type_view(op.operands[1].type).shape[1:]))
        if name in _LAYOUT_OPS and depth < 4 and len(op.results) == 1:
            found = _argument_fan_in(op.results[0], depth + 1)
            if found is not None:
                return found
    return None


def _marked_parameters(func: ir.Operation) -> list[bool]:
    """Which arguments carry `lamina.parameter` (the importers' weights)."""
    count = len(func.regions[0].blocks[0].arguments)
    if "arg_attrs" not in func.attributes:
        return [False] * count
    return ["lamina.parameter" in ir.DictAttr(attributes)
            for attributes in ir.ArrayAttr(func.attributes["arg_attrs"])]


def weight_fan_ins(module: ir.Module, entry: str | None = None) -> list[int | None]:
    """For each argument of the entry function, the fan-in of the weight it
    is, else None. A weight is recognised by its use (the right operand of a
    matmul: fan-in K; the filter of a conv2d, or its bias: I x KH x KW), or
    by its mark (`lamina.parameter`, the importers' weights): a marked
    argument of rank 2 or more that reaches no such use is taken as a
    matrix `[..., K, N]`."""
    from lamina.runtime import find_entry
    func = find_entry(module, entry)
    fan_ins = []
    for argument, marked in zip(func.regions[0].blocks[0].arguments, _marked_parameters(func)):
        fan_in = _argument_fan_in(argument)
        view = type_view(argument.type)
        if fan_in is None and marked and getattr(view, "rank", 0) >= 2 and (
                view.shape[-2] is not None):
            fan_in = max(1, view.shape[-2])
        fan_ins.append(fan_in)
    return fan_ins


def _argument_index_bound(value: ir.Value, depth: int = 0) -> int | None:
    """The size of the axis that `value` indexes as the indices of an
    `nn.gather` (through layout ops), or None when it indexes none."""
    for use in value.uses:
        op = use.owner
        if op.name == "nn.gather" and use.operand_number == 1:
            shape = type_view(op.operands[0].type).shape
            axis = ir.IntegerAttr(op.attributes["axis"]).value if "axis" in op.attributes else 0
            return max(1, shape[axis % len(shape)])
        if op.name in _LAYOUT_OPS and depth < 4 and len(op.results) == 1:
            found = _argument_index_bound(op.results[0], depth + 1)
            if found is not None:
                return found
    return None


def index_bounds(module: ir.Module, entry: str | None = None) -> list[int | None]:
    """For each argument of the entry function, the size of the axis it
    indexes where it is the indices of a gather (token ids into an
    embedding table), else None."""
    from lamina.runtime import find_entry
    func = find_entry(module, entry)
    return [_argument_index_bound(argument) for argument in func.regions[0].blocks[0].arguments]


def random_inputs(types: Sequence[TensorType], seed: int = 0,
                  fan_ins: Sequence[int | None] | None = None,
                  bounds: Sequence[int | None] | None = None) -> list[np.ndarray]:
    """Random arguments: floats uniform in [-1, 1), integers in [-8, 8]
    (unsigned ones in [0, 16]; the indices of a gather, with a bound in `bounds` from
    `index_bounds`, in [0, bound): in range, where `nn.gather` would clamp
    the others), booleans fair coin flips. A float argument with a fan-in in `fan_ins`
    (`weight_fan_ins`) is a weight and is drawn as initialisers draw one
    (fan-in scaling, like PyTorch's default init): uniform in +-sqrt(3 /
    fan_in), whose variance 1/fan_in keeps a layer's outputs as large as its
    inputs, so that a deep network's results stay in the range where a
    softmax or a saturating activation still varies (unscaled weights grow
    each layer's outputs by sqrt(fan_in) and make a softmax one-hot); at
    most +-1, as other inputs (a fan-in of 1 or 2)."""
    rng = np.random.default_rng(seed)
    fan_ins = list(fan_ins) if fan_ins is not None else [None] * len(types)
    bounds = list(bounds) if bounds is not None else [None] * len(types)
    arrays = []
    for t, fan_in, bound in zip(types, fan_ins, bounds):
        dtype = numpy_dtype(t.dtype)
        if t.dtype == "i1":
            arrays.append(rng.random(t.shape) < 0.5)
        elif t.dtype.startswith("ui"):
            arrays.append(rng.integers(0, 17, t.shape).astype(dtype))
        elif t.dtype.startswith("i") and bound is not None:
            arrays.append(rng.integers(0, bound, t.shape).astype(dtype))
        elif t.dtype.startswith("i"):
            arrays.append(rng.integers(-8, 9, t.shape).astype(dtype))
        else:
            bound = 1.0 if fan_in is None else min(1.0, math.sqrt(3.0 / fan_in))
            arrays.append(rng.uniform(-bound, bound, t.shape).astype(dtype))
    return arrays


# A checked result is degenerate when this share of it is uninformative.
DEGENERATE_FRACTION = 0.9


def degeneracy(expected: np.ndarray) -> str | None:
    """Why comparing against `expected` (a float reference result) checks
    little, or None: every element the same (constant), nearly every element
    at the least or the greatest value (saturated, as a tanh or a clip far
    outside its range gives), or nearly every row of a probability
    distribution carrying all its weight on one element (one-hot, as a
    softmax of large logits gives)."""
    if expected.size <= 1 or not _is_float(expected.dtype):
        return None
    values = expected.astype(np.float64)
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return "no element is finite"
    low, high = float(finite.min()), float(finite.max())
    if low == high:
        return f"constant: every finite element is {low:.6g}"
    if values.ndim >= 1 and values.shape[-1] > 1 and low >= 0 and high <= 1 + 1e-3:
        rows = values.reshape(-1, values.shape[-1])
        sums = rows.sum(axis=1)
        if np.allclose(sums, 1, atol=1e-2):
            one_hot = int((rows.max(axis=1) > 0.99).sum())
            if one_hot >= DEGENERATE_FRACTION * len(rows):
                return (f"one-hot: {one_hot} of {len(rows)} rows put more than 0.99 on "
                        "one element")
    near = 1e-3 * (high - low)
    extreme = int(((finite <= low + near) | (finite >= high - near)).sum())
    if finite.size > 2 and extreme >= DEGENERATE_FRACTION * finite.size:
        return (f"saturated: {extreme} of {finite.size} elements are at the least "
                f"({low:.6g}) or the greatest ({high:.6g}) value")
    return None
