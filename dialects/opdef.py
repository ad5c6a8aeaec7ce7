"""Python-defined MLIR dialects on top of IRDL.

An op is one Python class. Its operands, results, attributes and regions are
declared as class annotations; its semantics are methods next to them:

    class NN(Dialect, name="nn"):
        pass

    class SoftmaxOp(NN.Operation, name="softmax"):
        '''Softmax along one axis.'''
        x: Operand
        result: Result
        axis: IntAttr = -1

        def infer_type(self, x): return x
        def reference(self, x): ...

From the classes the helper generates IRDL (`Dialect.irdl()`), loads it
idempotently into a context (`Dialect.load(ctx)`), verifies ops with the
Python rules (`Dialect.verify(op)`, errors emitted at the op's location), and
builds ops from Python (`SoftmaxOp.build(x, axis=0)` returns the result value).

The shape follows upstream's `mlir.dialects.ext` (class-style dialects, not in
LLVM 22) so that the definitions can move to it. IRDL in LLVM 22 declares no
traits and treats every declared attribute as required, so only attributes
without a default are declared in IRDL; defaults and attribute kinds are checked
by the Python verifier, which is also where every semantic rule lives.
"""

from __future__ import annotations

import sys
import typing
from dataclasses import dataclass
from typing import Any, ClassVar, Sequence

from mlir import ir
from mlir.dialects import irdl

# ---------------------------------------------------------------------------
# Tensor types as plain Python values, so that shape rules are testable
# without MLIR.

ELEMENT_TYPES = ("f32", "f16", "bf16", "f64", "i1", "i8", "i16", "i32", "i64")
FLOAT_TYPES = ("f32", "f16", "bf16", "f64")


@dataclass(frozen=True)
class TensorType:
    """A ranked, statically shaped tensor type: `tensor<2x3xf32>`."""

    shape: tuple[int, ...]
    dtype: str

    def __post_init__(self):
        object.__setattr__(self, "shape", tuple(int(d) for d in self.shape))

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def is_float(self) -> bool:
        return self.dtype in FLOAT_TYPES

    def with_shape(self, shape: Sequence[int]) -> "TensorType":
        return TensorType(tuple(shape), self.dtype)

    def with_dtype(self, dtype: str) -> "TensorType":
        return TensorType(self.shape, dtype)

    def __str__(self) -> str:
        dims = "".join(f"{d}x" for d in self.shape)
        return f"tensor<{dims}{self.dtype}>"

    def to_mlir(self) -> ir.Type:
        return ir.RankedTensorType.get(list(self.shape), ir.Type.parse(self.dtype))

    @staticmethod
    def from_mlir(t: ir.Type) -> "TensorType":
        """Converts an MLIR type; raises VerifyError for anything but a
        ranked, static tensor of a supported element type."""
        if not isinstance(t, ir.RankedTensorType):
            raise VerifyError(f"expected a ranked tensor, got {t}")
        rt = ir.RankedTensorType(t)
        if not rt.has_static_shape:
            raise VerifyError(f"expected a statically shaped tensor, got {t}")
        dtype = str(rt.element_type)
        if dtype not in ELEMENT_TYPES:
            raise VerifyError(f"unsupported element type {dtype} in {t}")
        return TensorType(tuple(rt.shape), dtype)


class VerifyError(Exception):
    """A rule of an op is violated; the message names the problem."""


# ---------------------------------------------------------------------------
# Declarations.


class Operand:
    """A single tensor operand. `Optional[Operand]` and `Variadic[Operand]`
    declare optional and variadic ones."""


class Result:
    """A single result."""


class Region:
    """A region, declared in IRDL. Lamina's own ops keep their bodies in
    outlined functions (IRDL ops cannot hold terminators in LLVM 22)."""


class Variadic:
    """`Variadic[Operand]`: zero or more operands."""

    def __class_getitem__(cls, item):
        return _VariadicMarker(item)


@dataclass(frozen=True)
class _VariadicMarker:
    item: Any


class AttrKind:
    """The kind of an attribute: how it converts between MLIR and Python."""

    description = "attribute"

    def to_python(self, attr: ir.Attribute) -> Any:
        raise NotImplementedError

    def to_mlir(self, value: Any) -> ir.Attribute:
        raise NotImplementedError

    def check(self, value: Any) -> str | None:
        """Returns a problem with a Python value, or None."""
        return None


class _IntAttr(AttrKind):
    description = "a 64-bit integer"

    def to_python(self, attr):
        if not (isinstance(attr, ir.IntegerAttr) and isinstance(attr.type, ir.IntegerType)
                and ir.IntegerType(attr.type).width == 64):
            raise ValueError
        return attr.value

    def to_mlir(self, value):
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(value))


class _FloatAttr(AttrKind):
    description = "a float"

    def to_python(self, attr):
        if isinstance(attr, ir.FloatAttr):
            return ir.FloatAttr(attr).value
        raise ValueError

    def to_mlir(self, value):
        return ir.FloatAttr.get(ir.F32Type.get(), float(value))


class _BoolAttr(AttrKind):
    description = "a bool"

    def to_python(self, attr):
        if isinstance(attr, ir.BoolAttr):
            return ir.BoolAttr(attr).value
        raise ValueError

    def to_mlir(self, value):
        return ir.BoolAttr.get(bool(value))


class _I64ArrayAttr(AttrKind):
    description = "an array<i64: ...>"

    def to_python(self, attr):
        if isinstance(attr, ir.DenseI64ArrayAttr):
            return tuple(ir.DenseI64ArrayAttr(attr))
        raise ValueError

    def to_mlir(self, value):
        return ir.DenseI64ArrayAttr.get([int(v) for v in value])


class EnumAttr(AttrKind):
    """A string attribute with a fixed set of values."""

    def __init__(self, *choices: str):
        self.choices = choices
        self.description = "one of " + ", ".join(f'"{c}"' for c in choices)

    def to_python(self, attr):
        if isinstance(attr, ir.StringAttr):
            return ir.StringAttr(attr).value
        raise ValueError

    def to_mlir(self, value):
        return ir.StringAttr.get(str(value))

    def check(self, value):
        if value not in self.choices:
            return f'"{value}" is not {self.description}'
        return None


IntAttr = _IntAttr()
FloatAttr = _FloatAttr()
BoolAttr = _BoolAttr()
I64ArrayAttr = _I64ArrayAttr()

_REQUIRED = object()
# The attribute that splits the operands among optional and variadic declarations.
SEGMENT_SIZES = "operandSegmentSizes"


@dataclass(frozen=True)
class OperandDecl:
    name: str
    kind: str  # "single", "optional" or "variadic"


@dataclass(frozen=True)
class AttrDecl:
    name: str
    kind: AttrKind
    default: Any = _REQUIRED

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED


# ---------------------------------------------------------------------------
# Dialects and ops.


class Dialect:
    """Base of a Python-defined dialect: `class NN(Dialect, name="nn")`."""

    name: ClassVar[str]
    ops: ClassVar[dict[str, type["Op"]]]
    Operation: ClassVar[type["Op"]]

    def __init_subclass__(cls, *, name: str, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.name = name
        cls.ops = {}
        cls.Operation = type("Operation", (Op,), {"dialect": cls, "__module__": cls.__module__})

    @classmethod
    def irdl(cls) -> str:
        """The IRDL definition of the dialect, as MLIR text."""
        body = "\n".join(op.irdl() for op in cls.ops.values())
        return f"irdl.dialect @{cls.name} {{\n{body}\n}}\n"

    @classmethod
    def load(cls, context: ir.Context) -> None:
        """Loads the dialect into `context`; loading it again is a no-op
        (upstream aborts when one IRDL dialect is loaded twice)."""
        first = next(iter(cls.ops))
        if context.is_registered_operation(f"{cls.name}.{first}"):
            return
        with context, ir.Location.unknown(context):
            irdl.load_dialects(ir.Module.parse(cls.irdl()))

    @classmethod
    def op_class(cls, operation: ir.Operation) -> type["Op"] | None:
        dialect, _, mnemonic = operation.name.partition(".")
        return cls.ops.get(mnemonic) if dialect == cls.name else None

    @classmethod
    def verify(cls, root: ir.Operation) -> bool:
        """Runs the Python rules of every op of this dialect nested in `root`.
        Each violation is emitted as an error at the op's location; returns
        True when there was none."""
        ok = True

        def visit(operation):
            nonlocal ok
            op_cls = cls.op_class(operation)
            if op_cls is not None:
                try:
                    op_cls.from_operation(operation).verify_all()
                except VerifyError as e:
                    operation.location.emit_error(f"'{operation.name}' op {e}")
                    ok = False
                except Exception as e:  # a bug in a rule: still reported at the op
                    operation.location.emit_error(
                        f"'{operation.name}' op internal error in its verifier: "
                        f"{type(e).__name__}: {e}")
                    ok = False
            return ir.WalkResult.ADVANCE

        root.walk(visit, ir.WalkOrder.PRE_ORDER)
        return ok


class Op:
    """Base of a Python-defined op. Subclass through `Dialect.Operation`.

    An instance is a view of one op: its attributes as Python values (defaults
    applied), its operand values and its types. A view can also be detached
    (no MLIR op behind it), which is how builders infer result types.
    """

    dialect: ClassVar[type[Dialect]]
    name: ClassVar[str] = ""
    operand_decls: ClassVar[tuple[OperandDecl, ...]] = ()
    result_names: ClassVar[tuple[str, ...]] = ()
    attr_decls: ClassVar[tuple[AttrDecl, ...]] = ()
    region_names: ClassVar[tuple[str, ...]] = ()
    # Element types accepted by the op's tensor operands.
    element_types: ClassVar[tuple[str, ...]] = ("f32", "f16", "bf16")
    # True when the result type is given by the IR (cast, reshape) instead of
    # being inferred from the operands alone.
    explicit_result_type: ClassVar[bool] = False

    def __init_subclass__(cls, *, name: str | None = None, **kwargs):
        super().__init_subclass__(**kwargs)
        hints = _own_annotations(cls)
        operands, results, attrs, regions = [], [], [], []
        # Inherit declarations from the base classes, then add this class's own.
        for base in cls.__mro__[1:]:
            if issubclass(base, Op):
                operands = list(base.operand_decls)
                results = list(base.result_names)
                attrs = list(base.attr_decls)
                regions = list(base.region_names)
                break
        for field, ann in hints.items():
            if ann is Operand:
                operands.append(OperandDecl(field, "single"))
            elif typing.get_origin(ann) is typing.Union and Operand in typing.get_args(ann):
                operands.append(OperandDecl(field, "optional"))
            elif isinstance(ann, _VariadicMarker):
                operands.append(OperandDecl(field, "variadic"))
            elif ann is Result:
                results.append(field)
            elif ann is Region:
                regions.append(field)
            elif isinstance(ann, AttrKind):
                attrs = [a for a in attrs if a.name != field]
                attrs.append(AttrDecl(field, ann, cls.__dict__.get(field, _REQUIRED)))
            else:
                continue
            if field in cls.__dict__:
                delattr(cls, field)
        cls.operand_decls = tuple(operands)
        cls.result_names = tuple(results)
        cls.attr_decls = tuple(attrs)
        cls.region_names = tuple(regions)
        for decl in cls.attr_decls:
            setattr(cls, decl.name, _AttrProperty(decl.name))
        if name is not None:
            cls.name = name
            cls.dialect.ops[name] = cls

    # -- construction -----------------------------------------------------

    def __init__(self, attrs: dict[str, Any], operation: ir.Operation | None = None,
                 result_types: Sequence[TensorType] = ()):
        self.attrs = attrs
        self.operation = operation
        self.given_result_types = tuple(result_types)

    @classmethod
    def op_name(cls) -> str:
        return f"{cls.dialect.name}.{cls.name}"

    @classmethod
    def from_operation(cls, operation: ir.Operation) -> "Op":
        """A view of `operation`; raises VerifyError for a malformed attribute."""
        attrs = {}
        present = operation.attributes
        for decl in cls.attr_decls:
            if decl.name in present:
                try:
                    value = decl.kind.to_python(present[decl.name])
                except ValueError:
                    raise VerifyError(
                        f"attribute '{decl.name}' must be {decl.kind.description}, "
                        f"got {present[decl.name]}") from None
            elif decl.required:
                raise VerifyError(f"requires attribute '{decl.name}'")
            else:
                value = decl.default
            attrs[decl.name] = value
        result_types = []
        for r in operation.results:
            try:
                result_types.append(TensorType.from_mlir(r.type))
            except VerifyError as e:
                raise VerifyError(f"result: {e}") from None
        return cls(attrs, operation, result_types)

    @classmethod
    def detached(cls, result_types: Sequence[TensorType] = (), **attrs) -> "Op":
        """A view with no MLIR op behind it, for inference and references."""
        unknown = set(attrs) - {d.name for d in cls.attr_decls}
        if unknown:
            raise TypeError(f"{cls.op_name()} has no attribute {sorted(unknown)[0]!r}")
        values = {}
        for decl in cls.attr_decls:
            if decl.name in attrs and attrs[decl.name] is not None:
                values[decl.name] = attrs[decl.name]
            elif decl.required:
                raise TypeError(f"{cls.op_name()} requires attribute {decl.name!r}")
            else:
                values[decl.name] = decl.default
        return cls(values, None, result_types)

    @classmethod
    def build(cls, *operands: ir.Value | None, result_type: TensorType | None = None,
              loc: ir.Location | None = None, ip: ir.InsertionPoint | None = None,
              **attrs) -> ir.Value:
        """Creates the op at the current insertion point and returns its result.
        Operands are positional in declaration order (a list for a variadic
        one, None for an absent optional one)."""
        view = cls.detached([result_type] if result_type else [], **attrs)
        flat, sizes = view._flatten_operands(operands)
        types = [TensorType.from_mlir(v.type) for v in flat]
        view.verify_types(types, sizes)
        out_type = view.infer_type(*view._group(types, sizes))
        attributes = {d.name: d.kind.to_mlir(view.attrs[d.name])
                      for d in cls.attr_decls
                      if d.required or view.attrs[d.name] != d.default}
        if sum(d.kind != "single" for d in cls.operand_decls) > 1:
            # IRDL cannot tell the groups apart without the segment sizes.
            attributes[SEGMENT_SIZES] = ir.DenseI32ArrayAttr.get(sizes)
        if loc is None:
            try:
                loc = ir.Location.current
            except ValueError:
                loc = ir.Location.unknown(flat[0].context if flat else None)
        with loc:
            operation = ir.Operation.create(cls.op_name(), results=[out_type.to_mlir()],
                                            operands=flat, attributes=attributes,
                                            regions=len(cls.region_names), ip=ip)
        return operation.results[0]

    # -- access -------------------------------------------------------------

    def _flatten_operands(self, operands):
        if len(operands) > len(self.operand_decls) or len(operands) < sum(
                d.kind == "single" for d in self.operand_decls):
            raise TypeError(f"{self.op_name()} takes {len(self.operand_decls)} operand groups, "
                            f"got {len(operands)}")
        flat, sizes = [], []
        for decl, value in zip(self.operand_decls, operands):
            if decl.kind == "variadic":
                flat.extend(value)
                sizes.append(len(value))
            elif value is not None:
                flat.append(value)
                sizes.append(1)
            else:
                sizes.append(0)
        sizes.extend(0 for _ in self.operand_decls[len(operands):])
        return flat, sizes

    def _segment_sizes(self, count: int) -> list[int]:
        """The number of operands of each declaration: the op's
        `operandSegmentSizes` where it has one (IRDL requires it when more
        than one operand is optional or variadic), else optional operands
        take the operands beyond the single ones first."""
        if self.operation is not None and SEGMENT_SIZES in self.operation.attributes:
            return list(ir.DenseI32ArrayAttr(self.operation.attributes[SEGMENT_SIZES]))
        extra = count - sum(d.kind == "single" for d in self.operand_decls)
        sizes = []
        for decl in self.operand_decls:
            size = 1 if decl.kind == "single" else max(
                0, min(extra, 1) if decl.kind == "optional" else extra)
            if decl.kind != "single":
                extra -= size
            sizes.append(size)
        return sizes

    def _group(self, flat: Sequence[Any], sizes: Sequence[int] | None = None) -> list[Any]:
        """Groups a flat operand list by declaration: a list for a variadic
        operand, None for an absent optional one."""
        if sizes is None:
            sizes = self._segment_sizes(len(flat))
        groups, i = [], 0
        for decl, size in zip(self.operand_decls, sizes):
            if decl.kind == "variadic":
                groups.append(list(flat[i:i + size]))
            else:
                groups.append(flat[i] if size else None)
            i += size
        return groups

    @property
    def operand_types(self) -> list[TensorType]:
        return [TensorType.from_mlir(v.type) for v in self.operation.operands]

    @property
    def result_type(self) -> TensorType:
        return self.given_result_types[0]

    def operand(self, name: str):
        """The value(s) of a declared operand of the op behind this view."""
        index = [d.name for d in self.operand_decls].index(name)
        return self._group(list(self.operation.operands))[index]

    # -- rules (overridden by ops) --------------------------------------------

    def infer_type(self, *operand_types) -> TensorType:
        """The result type from the operand types (grouped like the operands)
        and the attributes. Raises VerifyError when they do not fit."""
        raise NotImplementedError(f"{self.op_name()} has no type rule")

    def verify(self, *operand_types) -> None:
        """Rules beyond the type rule (attribute values); raises VerifyError."""

    def reference(self, *arrays):
        """The op's meaning on NumPy arrays."""
        raise NotImplementedError(f"{self.op_name()} has no reference")

    # -- driver -------------------------------------------------------------

    def verify_types(self, flat_types: Sequence[TensorType],
                     sizes: Sequence[int] | None = None) -> None:
        for decl in self.attr_decls:
            problem = decl.kind.check(self.attrs[decl.name])
            if problem:
                raise VerifyError(f"attribute '{decl.name}': {problem}")
        for i, t in enumerate(flat_types):
            if t.dtype not in self.element_types:
                raise VerifyError(
                    f"operand #{i} has element type {t.dtype}; expected "
                    + " or ".join(self.element_types))
        self.verify(*self._group(flat_types, sizes))

    def verify_all(self) -> None:
        """Every rule of the op behind this view; raises VerifyError."""
        operation = self.operation
        singles = sum(d.kind == "single" for d in self.operand_decls)
        has_variadic = any(d.kind == "variadic" for d in self.operand_decls)
        optionals = sum(d.kind == "optional" for d in self.operand_decls)
        count = len(operation.operands)
        if count < singles or (not has_variadic and count > singles + optionals):
            expected = str(singles) if not optionals else f"{singles} to {singles + optionals}"
            if has_variadic:
                expected = f"at least {singles}"
            raise VerifyError(f"expects {expected} operands, got {count}")
        if has_variadic and count == 0:
            raise VerifyError("expects at least one operand")
        if len(operation.results) != len(self.result_names):
            raise VerifyError(
                f"expects {len(self.result_names)} result(s), got {len(operation.results)}")
        types = []
        for i, v in enumerate(operation.operands):
            try:
                types.append(TensorType.from_mlir(v.type))
            except VerifyError as e:
                raise VerifyError(f"operand #{i}: {e}") from None
        self.verify_types(types)
        inferred = self.infer_type(*self._group(types))
        if inferred != self.result_type:
            raise VerifyError(
                f"result type {self.result_type} does not match the inferred type {inferred}")

    def run_reference(self, *arrays):
        """`reference` on a flat list of arrays, grouped like the operands."""
        return self.reference(*self._group(list(arrays)))

    # -- IRDL ---------------------------------------------------------------

    @classmethod
    def splits_variadic_head(cls) -> bool:
        """True when the op's only non-single operand is variadic: its IRDL
        then declares the first operand on its own (which makes the variadic
        operand require at least one value, as the Python rules do). With
        more than one optional or variadic group the IRDL keeps one group per
        declaration, as `operandSegmentSizes` counts them."""
        groups = [d.kind for d in cls.operand_decls if d.kind != "single"]
        return groups == ["variadic"]

    @classmethod
    def irdl(cls) -> str:
        lines = [f"  irdl.operation @{cls.name} {{"]
        operands, results, attrs, regions = [], [], [], []
        split_head = cls.splits_variadic_head()
        for i, decl in enumerate(cls.operand_decls):
            lines.append(f"    %o{i} = irdl.any")
            if decl.kind == "variadic" and split_head:
                # IRDL binds one type to all operands of a variadic group, so
                # the first operand gets its own constraint: two operands of
                # different types (concat of different sizes) verify.
                lines.append(f"    %o{i}_head = irdl.any")
                operands.append(f"{decl.name}_head: %o{i}_head")
            prefix = "" if decl.kind == "single" else decl.kind + " "
            operands.append(f"{decl.name}: {prefix}%o{i}")
        for i, name in enumerate(cls.result_names):
            lines.append(f"    %r{i} = irdl.any")
            results.append(f"{name}: %r{i}")
        for i, decl in enumerate(d for d in cls.attr_decls if d.required):
            lines.append(f"    %a{i} = irdl.any")
            attrs.append(f'"{decl.name}" = %a{i}')
        for i, name in enumerate(cls.region_names):
            lines.append(f"    %g{i} = irdl.region")
            regions.append(f"{name}: %g{i}")
        if operands:
            lines.append(f"    irdl.operands({', '.join(operands)})")
        if results:
            lines.append(f"    irdl.results({', '.join(results)})")
        if attrs:
            lines.append(f"    irdl.attributes {{{', '.join(attrs)}}}")
        if regions:
            lines.append(f"    irdl.regions({', '.join(regions)})")
        lines.append("  }")
        return "\n".join(lines)


class _AttrProperty:
    """`view.axis` reads the attribute's Python value."""

    def __init__(self, name: str):
        self.name = name

    def __get__(self, view, owner=None):
        if view is None:
            return self
        return view.attrs[self.name]


def _own_annotations(cls) -> dict[str, Any]:
    """The class's own annotations, evaluated in its module's namespace."""
    raw = cls.__dict__.get("__annotations__", {})
    namespace = dict(vars(sys.modules[cls.__module__]))
    namespace.update({"Operand": Operand, "Result": Result, "Region": Region,
                      "Variadic": Variadic, "Optional": typing.Optional})
    hints = {}
    for field, ann in raw.items():
        hints[field] = eval(ann, namespace) if isinstance(ann, str) else ann
    return hints
