"""The shapes of a call of a program with '?' dims.

A compiled program with dynamic dims takes arrays of any sizes its ops'
type rules allow. Its results are allocated by the caller (the CPU
pipeline makes them out-parameters), so the sizes of a call's results are
computed before it: `ShapeFunction` runs the nn ops' own type rules
(`infer_type`) on the sizes of the call, in program order. The same rules
that proved the static dims at compile time thus check the '?' ones (a
'?' dim is a `RuntimeDim`, which does not broadcast) and give the result
shapes; a call that breaks one is a `ShapeError` naming the op and its
location, raised before any code runs. The lowered code checks the same
constraints again (`cf.assert`) for callers that bypass this module.

Names. An argument's `nn.dims` attribute names its '?' dims in order
(`%x: tensor<?x?x768xf32> {nn.dims = ["B", "S"]}`): a name used twice says
the sizes are equal (checked per call), and `lamina-run --dims B=2,S=37`
draws arrays of those sizes. Every '?' dim is also named by its position,
`ARG:DIM` (`0:1`), the only name of one that `nn.dims` does not name.

This module works on the nn program (before any lowering) and imports no
pass or lowering.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from mlir import ir

from lamina.dialects.opdef import lookup_op
from lamina.types import RuntimeDim, TensorType, VerifyError

DIMS_ATTRIBUTE = "nn.dims"


class ShapeError(ValueError):
    """Sizes that break a program's rules: `location: error: message`."""

    def __init__(self, location: ir.Location | None, message: str):
        self.location = location
        self.message = message
        self.where = _where(location)
        super().__init__(f"{self.where}: error: {message}" if self.where else message)


def _where(location: ir.Location | None) -> str:
    if location is None:
        return ""
    text = str(location)
    # loc("file":line:col) -> file:line:col
    if text.startswith('loc("') and text.endswith(")"):
        inner = text[5:-1]
        name, _, position = inner.partition('"')
        return name + position
    return text


def _function_type(func: ir.Operation) -> ir.FunctionType:
    return ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)


def _argument_attributes(func: ir.Operation, count: int) -> list[dict]:
    if "arg_attrs" not in func.attributes:
        return [{} for _ in range(count)]
    return [{a.name: a.attr for a in ir.DictAttr(d)}
            for d in ir.ArrayAttr(func.attributes["arg_attrs"])]


def dim_names(func: ir.Operation) -> list[tuple[str, ...]]:
    """For each argument, the names of its '?' dims: from `nn.dims`, else
    `ARG:DIM`. Raises VerifyError for an `nn.dims` that does not fit."""
    types = list(_function_type(func).inputs)
    names = []
    for index, (t, attributes) in enumerate(zip(types, _argument_attributes(func, len(types)))):
        dynamic = ([d for d in range(ir.ShapedType(t).rank) if ir.ShapedType(t).is_dynamic_dim(d)]
                   if isinstance(t, ir.RankedTensorType) else [])
        given = attributes.get(DIMS_ATTRIBUTE)
        if given is None:
            names.append(tuple(f"{index}:{d}" for d in dynamic))
            continue
        try:
            spelled = tuple(ir.StringAttr(a).value for a in ir.ArrayAttr(given))
        except ValueError:
            raise VerifyError(f"argument #{index}: '{DIMS_ATTRIBUTE}' must be an array of "
                              f"strings, got {given}") from None
        if len(spelled) != len(dynamic):
            raise VerifyError(f"argument #{index}: '{DIMS_ATTRIBUTE}' names {len(spelled)} "
                              f"dim(s); {t} has {len(dynamic)} '?' dim(s)")
        names.append(spelled)
    return names


def is_dynamic(func: ir.Operation) -> bool:
    """Whether a function's arguments or results have '?' dims."""
    function_type = _function_type(func)
    return any(isinstance(t, ir.RankedTensorType) and not ir.ShapedType(t).has_static_shape
               for t in list(function_type.inputs) + list(function_type.results))


def _concrete(t: ir.Type, shape: Sequence[int], what: str,
              location: ir.Location | None) -> TensorType:
    """The IR type `t` at the sizes `shape`: its '?' dims RuntimeDims."""
    view = TensorType.from_mlir(t, dynamic=True)
    if len(shape) != view.rank:
        raise ShapeError(location, f"{what}: expected {view}, got shape {tuple(shape)}")
    dims = []
    for index, (declared, size) in enumerate(zip(view.shape, shape)):
        if declared is not None and declared != size:
            raise ShapeError(location, f"{what}: expected {view}, got shape {tuple(shape)} "
                                       f"(dim {index} is {size})")
        dims.append(RuntimeDim(size) if declared is None else int(size))
    return view.with_shape(dims)


def has_dynamic_types(op: ir.Operation) -> bool:
    """Whether an op's operands or results have '?' dims."""
    return any(isinstance(v.type, ir.RankedTensorType)
               and not ir.ShapedType(v.type).has_static_shape
               for v in list(op.operands) + list(op.results))


def op_result_shapes(op: ir.Operation, shapes: Sequence[Sequence[int]]
                     ) -> list[tuple[int, ...]] | None:
    """The result shapes of one op (not a call) on operands of `shapes`,
    by its rule; None for an op of no rule. Raises ShapeError."""
    types = [_concrete(v.type, s, f"'{op.name}' op operand #{i}", op.location)
             if isinstance(v.type, ir.RankedTensorType) else None
             for i, (v, s) in enumerate(zip(op.operands, shapes))]
    results = _results(op, types, None)
    return [tuple(int(d) for d in t.shape) if t is not None else None for t in results]


def _results(op: ir.Operation, operands: list[TensorType | None], call) -> list:
    """The concrete result types of `op` on concrete operand types: by the
    op's rule, by `call(callee, operands)` for a call (None: the IR's
    types, unchecked), else the IR's static types."""
    callee = None
    if op.name == "func.call":
        callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
    op_class = lookup_op(op.name)
    if op_class is not None:
        try:
            view = op_class.from_operation(op)
            if hasattr(view, "callee"):
                callee = view.callee()
            else:
                inferred = view._inferred(view._group(operands))
                if inferred is not None:
                    return _checked(op, inferred[0])
        except VerifyError as error:
            raise ShapeError(op.location, f"'{op.name}' op {error}") from None
    if callee is not None:
        return [None] * len(op.results) if call is None else _checked(op, call(callee, operands))
    return _checked(op, [None] * len(op.results))


class ShapeFunction:
    """The result shapes of a function for the shapes of its arguments."""

    def __init__(self, module: ir.Module, func: ir.Operation):
        self.module = module
        self.func = func
        self.names = dim_names(func)
        self.functions = {ir.StringAttr(op.attributes["sym_name"]).value: op
                          for op in (o.operation for o in module.body.operations)
                          if op.name == "func.func"}
        self._cache: dict[tuple, list[tuple[int, ...]]] = {}

    def __call__(self, shapes: Sequence[Sequence[int]]) -> list[tuple[int, ...]]:
        """The result shapes for argument `shapes`; raises ShapeError."""
        key = tuple(tuple(s) for s in shapes)
        cached = self._cache.get(key)
        if cached is None:
            self.check_names(key)
            types = [_concrete(t, s, f"argument #{i}", self.func.location)
                     for i, (t, s) in enumerate(zip(_function_type(self.func).inputs, key))]
            cached = [tuple(int(d) for d in t.shape) for t in self.run(self.func, types)]
            self._cache[key] = cached
        return cached

    def check_names(self, shapes: Sequence[Sequence[int]]) -> None:
        """Dims named alike must have one size."""
        sizes: dict[str, tuple[int, int]] = {}
        for index, (names, shape, t) in enumerate(zip(self.names, shapes,
                                                      _function_type(self.func).inputs)):
            dynamic = [d for d in range(len(shape)) if ir.ShapedType(t).is_dynamic_dim(d)]
            for name, dim in zip(names, dynamic):
                size = shape[dim]
                if name in sizes and sizes[name][1] != size:
                    raise ShapeError(self.func.location,
                                     f"dim '{name}' is {sizes[name][1]} in argument "
                                     f"#{sizes[name][0]} and {size} in argument #{index}")
                sizes.setdefault(name, (index, size))

    def _call(self, callee: str, types: Sequence[TensorType]) -> list[TensorType]:
        return self.run(self.functions[callee], types)

    def run(self, func: ir.Operation, types: Sequence[TensorType]) -> list[TensorType]:
        """The concrete result types of `func` on concrete argument types."""
        block = func.regions[0].blocks[0]
        values: dict[ir.Value, TensorType] = dict(zip(block.arguments, types))
        for op in block.operations:
            op = op.operation
            operands = [values.get(v) for v in op.operands]
            if op.name == "func.return":
                return operands
            for value, t in zip(op.results, _results(op, operands, self._call)):
                values[value] = t
        raise ShapeError(func.location, "the function does not end with func.return")


def _checked(op: ir.Operation, types: Sequence[TensorType | None]) -> list:
    """`types` (None: the IR's, which must then be static) against the
    result types in the IR."""
    checked = []
    for index, (result, t) in enumerate(zip(op.results, types)):
        if not isinstance(result.type, ir.RankedTensorType):
            checked.append(None)
            continue
        declared = TensorType.from_mlir(result.type, dynamic=True)
        if t is None:
            if not declared.is_static:
                raise ShapeError(op.location, f"'{op.name}' op has no rule giving the "
                                              f"size of its result {declared}")
            t = declared
        bad = [d for d, (a, b) in enumerate(zip(declared.shape, t.shape))
               if a is not None and a != b]
        if bad:
            raise ShapeError(op.location, f"'{op.name}' op result #{index}: dim {bad[0]} "
                                          f"is {t.shape[bad[0]]} at run time; the IR says "
                                          f"{declared}")
        checked.append(t)
    return checked


def parse_dims(text: str) -> dict[str, int]:
    """`S=37,B=2` (or `0:0=37`) as a mapping; raises ValueError."""
    sizes = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, equals, size = item.partition("=")
        if not equals or not name.strip() or not size.strip().isdigit():
            raise ValueError(f"--dims: expected NAME=SIZE items separated by commas, "
                             f"got '{item}'")
        sizes[name.strip()] = int(size)
    return sizes


def argument_shapes(func: ir.Operation, sizes: Mapping[str, int]) -> list[tuple[int, ...]]:
    """The argument shapes with each '?' dim's size taken from `sizes` (by
    its name: see the module docstring); raises ValueError naming a
    missing or unknown dim."""
    names = dim_names(func)
    types = list(_function_type(func).inputs)
    positions = {f"{i}:{d}" for i, t in enumerate(types) if isinstance(t, ir.RankedTensorType)
                 for d in range(ir.ShapedType(t).rank) if ir.ShapedType(t).is_dynamic_dim(d)}
    known = {n for group in names for n in group}
    unknown = sorted(set(sizes) - known - positions)
    if unknown:
        raise ValueError(f"--dims names {', '.join(unknown)}, which no '?' dim of "
                         f"@{ir.StringAttr(func.attributes['sym_name']).value} has (its dims: "
                         f"{', '.join(sorted(known)) or 'none'})")
    shapes = []
    for index, (t, group) in enumerate(zip(types, names)):
        if not isinstance(t, ir.ShapedType):
            shapes.append(())
            continue
        shaped = ir.ShapedType(t)
        dims, names_left = [], list(group)
        for d in range(shaped.rank):
            if shaped.is_dynamic_dim(d):
                name, position = names_left.pop(0), f"{index}:{d}"
                if name not in sizes and position not in sizes:
                    raise ValueError(f"dim '{name}' is '?': give its size with --dims "
                                     f"{name}=SIZE")
                dims.append(sizes.get(name, sizes.get(position)))
            else:
                dims.append(shaped.shape[d])
        shapes.append(tuple(dims))
    return shapes
