"""Python builders of nn ops, and tracing of Python functions into nn programs.

One snake_case builder per op of the nn dialect, made from the op class
(`lamina.dialects.nn`) when it is first used, so an op defined later, by a
user or a plugin, has one too (`nn.hard_sigmoid(x)`): operands positionally in declaration order
(a list for a variadic one; an optional one by keyword or positionally),
then attributes positionally in declaration order or by keyword:

    y = nn.matmul(x, w)
    y = nn.softmax(y, axis=-1)            # or nn.softmax(y, -1)
    y = nn.reshape(y, (2, -1))            # ops whose result type is given:
    y = nn.cast(y, "f16")                 #   reshape, broadcast_to, cast
    y = nn.conv2d(x, w, bias=b, strides=(2, 2))
    y = nn.concat([a, b], axis=0)

Each builder creates the op at the current insertion point (like upstream's
`arith.constant(...)`) with the caller's file and line as its location, and
returns a `Tensor`: an `ir.Value` with `shape`, `dtype` and the operators
`+ - * / ** @` and unary `-` (Python numbers and NumPy arrays become
constants). A shape or type error raises CompileError at the caller's line.

`lamina.jit` (below) traces a Python function written with these builders
into a `func.func`, once per signature of its NumPy arguments, and compiles
it.
"""

from __future__ import annotations

import functools
import inspect
import math
import os
import threading
from typing import Any, Callable, Sequence

import numpy as np
from mlir import ir
from mlir.dialects import arith, func

from lamina.context import make_context, verify
from lamina.diagnostics import CompileError, DiagnosticCollector
from lamina.dialects.nn import NN
from lamina.dialects.opdef import I64ArrayAttr
from lamina.types import NUMPY_DTYPES, TensorType, VerifyError, element_type_name, numpy_dtype

# Modules whose frames a builder's location skips: this one, and API
# modules that build ops on a user's behalf (lamina.sharding).
API_FILES = {os.path.abspath(__file__)}


def element_type_of(dtype) -> str:
    """The element type name (`f32`, `bf16`, `i1`, ...) of a NumPy dtype."""
    try:
        return element_type_name(dtype)
    except ValueError:
        raise TypeError(f"arrays of {np.dtype(dtype)} are not supported (element types: "
                        f"{', '.join(NUMPY_DTYPES)})") from None


class Tensor(ir.Value):
    """A tensor value built by the nn builders; arithmetic operators build
    nn ops."""

    @property
    def tensor_type(self) -> TensorType:
        return TensorType.from_mlir(self.type, dynamic=True)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.tensor_type.shape

    @property
    def dtype(self) -> str:
        return self.tensor_type.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        return f"Tensor({self.type})"

    def __add__(self, other):
        return _build("add", self, other)

    def __radd__(self, other):
        return _build("add", other, self)

    def __sub__(self, other):
        return _build("sub", self, other)

    def __rsub__(self, other):
        return _build("sub", other, self)

    def __mul__(self, other):
        return _build("mul", self, other)

    def __rmul__(self, other):
        return _build("mul", other, self)

    def __truediv__(self, other):
        return _build("div", self, other)

    def __rtruediv__(self, other):
        return _build("div", other, self)

    def __pow__(self, other):
        return _build("pow", self, other)

    def __rpow__(self, other):
        return _build("pow", other, self)

    def __matmul__(self, other):
        return _build("matmul", self, other)

    def __rmatmul__(self, other):
        return _build("matmul", other, self)

    def __neg__(self):
        return _build("neg", self)


# ---------------------------------------------------------------------------
# Locations and errors.


def _caller_location() -> ir.Location:
    """The file:line:col of the first caller outside this module."""
    frame = inspect.currentframe()
    while frame is not None and os.path.abspath(frame.f_code.co_filename) in API_FILES:
        frame = frame.f_back
    if frame is None:
        return ir.Location.unknown()
    info = inspect.getframeinfo(frame, context=0)
    positions = getattr(info, "positions", None)
    col = (positions.col_offset + 1) if positions and positions.col_offset is not None else 1
    return ir.Location.file(info.filename, info.lineno, col)


# ---------------------------------------------------------------------------
# Constants.


def constant(value, dtype: str | None = None) -> Tensor:
    """A constant tensor from a NumPy array or a Python number (`dtype`
    names its element type; default: the array's, or f32)."""
    return _constant(value, dtype, _caller_location())


def _constant(value, dtype: str | None, location: ir.Location) -> Tensor:
    if dtype is None:
        dtype = element_type_of(value.dtype) if isinstance(value, np.ndarray) else "f32"
    array = np.asarray(value, dtype=numpy_dtype(dtype))
    tensor_type = TensorType(array.shape, dtype).to_mlir()
    if dtype in ("bf16", "i1"):
        # The bindings take neither bf16 nor packed-bit buffers: go through text.
        attr = ir.Attribute.parse(f"dense<{_literal(array, dtype)}> : {tensor_type}")
    else:
        attr = ir.DenseElementsAttr.get(np.ascontiguousarray(array), type=tensor_type)
    return Tensor(arith.ConstantOp(tensor_type, attr, loc=location).result)


def _literal(array: np.ndarray, dtype: str) -> str:
    if dtype == "i1":
        flat = ["true" if v else "false" for v in array.reshape(-1)]
    else:
        bits = array.reshape(-1).view(np.uint16)
        flat = [f"0x{int(b):04X}" for b in bits]
    if array.ndim == 0:
        return flat[0]
    nested = np.array(flat, dtype=object).reshape(array.shape)
    return _nest(nested)


def _nest(items) -> str:
    if isinstance(items, np.ndarray) and items.ndim > 0:
        return "[" + ", ".join(_nest(item) for item in items) + "]"
    return str(items)


def _is_tensor_value(value) -> bool:
    return isinstance(value, ir.Value) and isinstance(value.type, ir.RankedTensorType)


def _coerce(value, dtype: str | None, location: ir.Location) -> ir.Value:
    """An operand value: tensors as they are; NumPy arrays and numbers as
    constants (numbers take `dtype`, the element type of the op's tensors)."""
    if _is_tensor_value(value):
        return value
    if isinstance(value, np.ndarray):
        return _constant(value, None, location)
    if isinstance(value, (bool, int, float, np.generic)):
        return _constant(value, dtype or "f32", location)
    raise TypeError(f"expected a tensor, a NumPy array or a number, got {type(value).__name__}")


# ---------------------------------------------------------------------------
# Builders.


def _build(op_name: str, *args, location: ir.Location | None = None, **kwargs) -> Tensor:
    return builder(op_name)(*args, _location=location or _caller_location(), **kwargs)


def _result_type_for(op_class, x: ir.Value, target) -> TensorType:
    """The result type of reshape / broadcast_to / cast from the target
    argument: a shape (reshape may hold one -1) or an element type name."""
    source = TensorType.from_mlir(x.type, dynamic=True)
    if isinstance(target, TensorType):
        return target
    if isinstance(target, str) or isinstance(target, np.dtype) or (
            isinstance(target, type) and issubclass(target, np.generic)):
        name = target if isinstance(target, str) else element_type_of(target)
        return source.with_dtype(name)
    shape = [int(d) for d in target]
    if shape.count(-1) == 1:
        known = math.prod(d for d in shape if d != -1)
        shape[shape.index(-1)] = math.prod(source.shape) // known if known else 0
    return source.with_shape(shape)


def make_builder(op_class) -> Callable[..., Tensor]:
    """The snake_case builder of an nn op class."""
    decls = op_class.operand_decls
    attr_names = [d.name for d in op_class.attr_decls]
    operand_names = [d.name for d in decls]

    def builder(*args, _location: ir.Location | None = None, **kwargs):
        location = _location or _caller_location()
        args = list(args)
        operands: list[Any] = []
        for decl in decls:
            if decl.name in kwargs:
                operands.append(kwargs.pop(decl.name))
            elif decl.kind == "optional":
                operands.append(args.pop(0) if args and (args[0] is None or _is_tensor_value(
                    args[0]) or isinstance(args[0], np.ndarray)) else None)
            elif args:
                operands.append(args.pop(0))
            else:
                raise TypeError(f"nn.{op_class.name}() needs operand '{decl.name}'")
        result_type = kwargs.pop("result_type", None)
        if op_class.explicit_result_type and result_type is None:
            target = kwargs.pop("shape", kwargs.pop("dtype", None))
            if target is None and args:
                target = args.pop(0)
            if target is None:
                raise TypeError(f"nn.{op_class.name}() needs the result's "
                                f"{'element type' if op_class.name == 'cast' else 'shape'}")
        if len(args) > len(attr_names):
            raise TypeError(f"nn.{op_class.name}() takes operands {operand_names} and "
                            f"attributes {attr_names}; got {len(args)} extra arguments")
        for name, value in zip(attr_names, args):
            if name in kwargs:
                raise TypeError(f"nn.{op_class.name}() got two values for '{name}'")
            kwargs[name] = value
        for decl in op_class.attr_decls:
            if decl.kind is I64ArrayAttr and isinstance(kwargs.get(decl.name), (int, np.integer)):
                kwargs[decl.name] = (int(kwargs[decl.name]),)
        unknown = set(kwargs) - set(attr_names)
        if unknown:
            raise TypeError(f"nn.{op_class.name}() has no operand or attribute "
                            f"'{sorted(unknown)[0]}' (operands {operand_names}, attributes "
                            f"{attr_names})")
        with location:
            dtype = next((TensorType.from_mlir(v.type, dynamic=True).dtype for v in _flat(operands)
                          if _is_tensor_value(v)), None)
            values = []
            for decl, operand in zip(decls, operands):
                if decl.kind == "variadic":
                    values.append([_coerce(v, dtype, location) for v in operand])
                else:
                    values.append(None if operand is None else _coerce(operand, dtype, location))
            if op_class.explicit_result_type and result_type is None:
                result_type = _result_type_for(op_class, values[0], target)
            try:
                result = op_class.build(*values, result_type=result_type, loc=location, **kwargs)
            except VerifyError as error:
                raise CompileError.at(location, f"'{op_class.op_name()}' op {error}") from None
        return Tensor(result)

    builder.__name__ = builder.__qualname__ = op_class.name
    builder.__doc__ = (op_class.__doc__ or "").strip() + (
        f"\n\nOperands: {', '.join(operand_names)}."
        + (f" Attributes: {', '.join(attr_names)}." if attr_names else ""))
    return builder


def _flat(operands):
    for operand in operands:
        if isinstance(operand, (list, tuple)):
            yield from operand
        else:
            yield operand


_BUILDERS: dict[str, Callable[..., Tensor]] = {}


def builder(name: str) -> Callable[..., Tensor]:
    """The builder of the nn op `name`, made on first use, so that an op
    defined after this module was imported has one too."""
    found = _BUILDERS.get(name)
    if found is None:
        op_class = NN.ops.get(name)
        if op_class is None:
            raise AttributeError(f"the nn dialect has no op '{name}'")
        found = _BUILDERS[name] = make_builder(op_class)
    return found


def __getattr__(name: str) -> Callable[..., Tensor]:
    # `nn.matmul`, `nn.hard_sigmoid`: a builder for every op of the dialect.
    try:
        return builder(name)
    except AttributeError:
        raise AttributeError(f"module 'lamina.nn' has no attribute '{name}' (and the nn "
                             "dialect has no such op)") from None


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(NN.ops))


# ---------------------------------------------------------------------------
# Tracing and @jit.


class JitFunction:
    """A Python function traced into an nn program and compiled, once per
    signature (shapes and dtypes) of its array arguments.

    It may be called from any thread. Each signature is traced into a
    context of its own: an MLIR context must not be used by two compiles
    at once (a pass manager running functions in parallel marks its
    context multi-threaded, and the dialect registrations another compile
    makes in it then abort the process). One thread compiles a signature;
    the others calling with it wait for that compile."""

    def __init__(self, function: Callable, target="cpu"):
        self.function = function
        self.target = target
        self.cache: dict[tuple, Any] = {}
        self._compiling: dict[tuple, threading.RLock] = {}
        self._lock = threading.Lock()
        functools.update_wrapper(self, function)

    @staticmethod
    def signature_of(args: Sequence) -> tuple[TensorType, ...]:
        types = []
        for index, value in enumerate(args):
            array = value if isinstance(value, np.ndarray) else np.asarray(value)
            try:
                types.append(TensorType(array.shape, element_type_of(array.dtype)))
            except TypeError as error:
                raise TypeError(f"argument #{index}: {error}") from None
        return tuple(types)

    def trace(self, *args) -> ir.Module:
        """The nn program of the function for arguments like `args` (arrays,
        or TensorTypes)."""
        types = [a if isinstance(a, TensorType) else self.signature_of([a])[0] for a in args]
        context = make_context()
        name = getattr(self.function, "__name__", "main")
        if not name.isidentifier():
            name = "main"
        with context, DiagnosticCollector(context) as diagnostics:
            location = _definition_location(self.function)
            module = ir.Module.create(loc=location)
            with ir.InsertionPoint(module.body), location:
                function = func.FuncOp(name, ir.FunctionType.get([t.to_mlir() for t in types],
                                                                 []))
                block = function.add_entry_block()
                with ir.InsertionPoint(block):
                    outputs = self.function(*[Tensor(a) for a in block.arguments])
                    if outputs is None:
                        outputs = []
                    elif not isinstance(outputs, (tuple, list)):
                        outputs = [outputs]
                    values = [_coerce(v, None, location) for v in outputs]
                    func.ReturnOp(values)
                function.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
                    [t.to_mlir() for t in types], [v.type for v in values]))
            if not verify(module.operation):
                raise CompileError(diagnostics.errors)
        return module

    def compile(self, *args):
        """The compiled function for arguments like `args` (cached)."""
        key = self.signature_of(args)
        compiled = self.cache.get(key)
        if compiled is not None:
            return compiled
        with self._lock:
            compiling = self._compiling.setdefault(key, threading.RLock())
        with compiling:
            compiled = self.cache.get(key)
            if compiled is None:
                from lamina.targets import get_target
                module = self.trace(*key)
                compiled = get_target(self.target).compile(module)
                self.cache[key] = compiled
        return compiled

    def __call__(self, *args):
        return self.compile(*args)(*args)


def _definition_location(function: Callable) -> ir.Location:
    try:
        code = function.__code__
        return ir.Location.file(code.co_filename, code.co_firstlineno, 1)
    except AttributeError:
        return ir.Location.unknown()


def jit(function: Callable | None = None, *, target="cpu"):
    """Decorator: `@lamina.jit` or `@lamina.jit(target="cpu")`."""
    if function is None:
        return lambda f: JitFunction(f, target)
    return JitFunction(function, target)


__all__ = ["Tensor", "builder", "constant", "element_type_of", "jit", "make_builder"]
