"""Python-defined MLIR dialects on top of IRDL.

An op is one Python class. Its operands, results, attributes and regions are
declared as class annotations; its semantics are methods next to them:

    class NN(Dialect, name="nn"):
        pass

    class SoftmaxOp(NN.Operation, name="softmax"):
        '''Softmax along one axis.'''
        x: Operand                      # a tensor of the op's element types
        result: Result
        axis: IntAttr = -1

        def infer_type(self, x): return x
        def reference(self, x): ...

Operands and results declare their type with a constraint in brackets:

    src: Operand[MemRefOf("f16", space="global")]
    dst: Operand[MemRefOf("f16", space="workgroup")]
    count: Operand[Index]
    token: Result[TokenType]            # a type the dialect defines
    outs: Variadic[Result[TensorOf()]]
    bias: Optional[Operand[TensorOf("f32")]]

A bare `Operand` or `Result` is a ranked, static tensor of the op's
`element_types`. A dialect's own types are classes too:

    class TokenType(HW.Type, name="token"):
        '''Completion of a group of asynchronous copies.'''

From the classes the helper generates typed IRDL (`Dialect.irdl()`: each
operand and result constrained by its kind, so that upstream `mlir-opt
--irdl-file` rejects IR of the wrong kind), verifies ops with the Python
rules (`verify_ops`, errors emitted at the op's location), and builds ops
from Python (`SoftmaxOp.build(x, axis=0)` returns the result value; an op
with several results returns their list, one without results the op).

Every dialect class registers itself (`registered_dialects()`, `lookup_op`),
so that whatever is defined, by Lamina or by a user's file, is known to
every context from then on. Lamina's contexts do not load the IRDL: they
parse the ops of these dialects as unregistered ops, and `lamina.context`
verifies them, rejecting names and types no dialect defines. IRDL in
LLVM 22 could not serve there: it binds one type to every value of a
variadic group (a fusion group's operands differ), declares no traits,
treats every declared attribute as required and cannot constrain the
parameters of builtin types (element types, memory spaces). So every rule
lives in Python, and the IRDL is the export for upstream tools.

The shape follows upstream's `mlir.dialects.ext` (class-style dialects, not in
LLVM 22) so that the definitions can move to it.
"""

from __future__ import annotations

import sys
import typing
from dataclasses import dataclass
from typing import Any, ClassVar, Sequence

import numpy as np
from mlir import ir

from lamina.types import (ELEMENT_TYPES, FLOAT_TYPES, MEMORY_SPACES, MemRefType, OpaqueType,
                          ScalarType, TensorType, TypeView, VerifyError, element_type_name,
                          memory_space_name, type_view)

__all__ = [
    "AnyType", "AttrKind", "BoolAttr", "DenseElementsAttr", "Dialect", "DialectType",
    "ELEMENT_TYPES", "EnumAttr", "F32Attr", "F64Attr", "FLOAT_TYPES", "FloatAttr",
    "I32Attr", "I64ArrayAttr", "Index", "IntAttr", "MemRefOf", "MemRefType",
    "MemorySpaceAttr", "Op", "Operand", "Region", "Result", "ScalarOf", "ScalarType",
    "StrArrayAttr", "StrAttr", "SymbolRefAttr", "TensorOf", "TensorType", "TypeAttr",
    "TypeConstraint", "Variadic", "VerifyError", "lookup_op", "registered_dialects",
]


# ---------------------------------------------------------------------------
# Type constraints: what an operand or result may be, in Python and in IRDL.


class TypeConstraint:
    """The kind of type an operand or result may have."""

    description = "any type"

    def view(self, t: ir.Type, op: "Op") -> TypeView:
        """The Python view of `t`; raises VerifyError when `t` does not fit."""
        return type_view(t)

    def irdl(self, value: str) -> list[str]:
        """IRDL statements defining the constraint value `%value`."""
        return [f"%{value} = irdl.any"]

    def fixed_type(self) -> TypeView | None:
        """The one type this constraint allows, if it allows only one."""
        return None


def _element_types(dtypes: Sequence[str], op: "Op") -> Sequence[str]:
    return dtypes or op.element_types


def _check_element_type(view, dtypes: Sequence[str]) -> None:
    if view.dtype not in dtypes:
        raise VerifyError(f"has element type {view.dtype}; expected " + " or ".join(dtypes))


class TensorOf(TypeConstraint):
    """A ranked tensor of one of `dtypes` (none: the op's `element_types`),
    statically shaped unless the op takes '?' dims (`Op.dynamic_dims`)."""

    def __init__(self, *dtypes: str):
        self.dtypes = dtypes
        self.description = "a tensor" + (f" of {' or '.join(dtypes)}" if dtypes else "")

    def view(self, t, op):
        view = TensorType.from_mlir(t, dynamic=True)
        if not op.dynamic_dims and not view.is_static:
            raise VerifyError(f"dim {view.dynamic_dims[0]} of {t} is dynamic ('?'); "
                              f"'{op.op_name()}' takes statically shaped tensors only")
        _check_element_type(view, _element_types(self.dtypes, op))
        return view

    def irdl(self, value):
        return [f'%{value} = irdl.base "!builtin.tensor"']


class MemRefOf(TypeConstraint):
    """A ranked, statically shaped memref (identity layout) of one of
    `dtypes` (none: the op's `element_types`) in memory space `space`
    (`global`, `workgroup`, `private`; None: any of them)."""

    def __init__(self, *dtypes: str, space: str | None = None):
        if space is not None and space not in MEMORY_SPACES:
            raise ValueError(f"unknown memory space '{space}' (known: {', '.join(MEMORY_SPACES)})")
        self.dtypes = dtypes
        self.space = space
        self.description = ("a memref" + (f" of {' or '.join(dtypes)}" if dtypes else "")
                            + (f" in {space} memory" if space else ""))

    def view(self, t, op):
        view = MemRefType.from_mlir(t)
        _check_element_type(view, _element_types(self.dtypes, op))
        if self.space is not None and view.space != self.space:
            raise VerifyError(f"is in {view.space} memory; expected {self.space} memory "
                              f"({MEMORY_SPACES[self.space] or 'no memory space'})")
        return view

    def irdl(self, value):
        return [f'%{value} = irdl.base "!builtin.memref"']


class ScalarOf(TypeConstraint):
    """One of the scalar types `names` (`index`, `i32`, `f32`, ...)."""

    def __init__(self, *names: str):
        if not names:
            raise ValueError("ScalarOf needs at least one type name")
        self.names = names
        self.description = " or ".join(names)

    def view(self, t, op):
        text = str(t)
        if text not in self.names:
            raise VerifyError(f"has type {text}; expected {self.description}")
        return ScalarType(text)

    def irdl(self, value):
        if len(self.names) == 1:
            return [f"%{value} = irdl.is {self.names[0]}"]
        lines = [f"%{value}_{i} = irdl.is {name}" for i, name in enumerate(self.names)]
        choices = ", ".join(f"%{value}_{i}" for i in range(len(self.names)))
        return lines + [f"%{value} = irdl.any_of({choices})"]

    def fixed_type(self):
        return ScalarType(self.names[0]) if len(self.names) == 1 else None


class AnyType(TypeConstraint):
    """Any type at all."""


Index = ScalarOf("index")


class _DialectTypeConstraint(TypeConstraint):
    """The type a dialect defines (`!hw.token`)."""

    def __init__(self, type_class: type["DialectType"]):
        self.type_class = type_class
        self.description = type_class.mnemonic()

    def view(self, t, op):
        if str(t) != self.type_class.mnemonic():
            raise VerifyError(f"has type {t}; expected {self.description}")
        return OpaqueType(str(t))

    def irdl(self, value):
        return [f"%{value} = irdl.base @{self.type_class.dialect.name}::@{self.type_class.name}"]

    def fixed_type(self):
        return OpaqueType(self.type_class.mnemonic())


def _constraint(item: Any) -> TypeConstraint:
    if isinstance(item, TypeConstraint):
        return item
    if isinstance(item, type) and issubclass(item, DialectType):
        return _DialectTypeConstraint(item)
    raise TypeError(f"expected a type constraint (TensorOf, MemRefOf, ScalarOf, AnyType or a "
                    f"dialect type class), got {item!r}")


# ---------------------------------------------------------------------------
# Declarations.


class Operand:
    """A single operand: a tensor of the op's element types, or the kind
    in brackets (`Operand[MemRefOf("f16")]`). `Optional[Operand]` and
    `Variadic[Operand]` declare optional and variadic ones."""

    constraint: ClassVar[TypeConstraint] = TensorOf()

    def __class_getitem__(cls, item):
        return type(cls.__name__, (cls,), {"constraint": _constraint(item)})


class Result(Operand):
    """A single result; `Result[...]` and `Variadic[Result]` as for operands.
    A bare `Result` is a tensor of any element type: the op's type rule
    says which one."""

    constraint: ClassVar[TypeConstraint] = TensorOf(*ELEMENT_TYPES)


class Region:
    """A region. Lamina's own ops keep their bodies in outlined functions
    referenced by a symbol: an op of a Lamina dialect is no terminator (it
    cannot declare traits), and upstream terminators such as `scf.yield`
    insist on their own parents, so a region it holds could not end."""


class Variadic:
    """`Variadic[Operand]`: zero or more operands (or results)."""

    def __class_getitem__(cls, item):
        return _VariadicMarker(item)


@dataclass(frozen=True)
class _VariadicMarker:
    item: Any


# ---------------------------------------------------------------------------
# Attribute kinds.


class AttrKind:
    """The kind of an attribute: how it converts between MLIR and Python.
    Subclass it for a kind of your own (`to_python` raises ValueError for
    an attribute of the wrong kind)."""

    description = "attribute"
    # The IRDL constraint of a required attribute of this kind.
    irdl_constraint = "irdl.any"

    def to_python(self, attr: ir.Attribute) -> Any:
        raise NotImplementedError

    def to_mlir(self, value: Any) -> ir.Attribute:
        raise NotImplementedError

    def check(self, value: Any) -> str | None:
        """Returns a problem with a Python value, or None."""
        return None


class _IntegerAttr(AttrKind):
    irdl_constraint = 'irdl.base "#builtin.integer"'

    def __init__(self, width: int):
        self.width = width
        self.description = f"a {width}-bit integer"

    def to_python(self, attr):
        if not (isinstance(attr, ir.IntegerAttr) and isinstance(attr.type, ir.IntegerType)
                and ir.IntegerType(attr.type).width == self.width):
            raise ValueError
        return ir.IntegerAttr(attr).value

    def to_mlir(self, value):
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(self.width), int(value))

    def check(self, value):
        bound = 1 << (self.width - 1)
        if not -bound <= int(value) < bound:
            return f"{value} does not fit in {self.description}"
        return None


class _FloatAttr(AttrKind):
    irdl_constraint = 'irdl.base "#builtin.float"'

    def __init__(self, mlir_type: str):
        self.mlir_type = mlir_type
        self.description = "a float"

    def to_python(self, attr):
        if isinstance(attr, ir.FloatAttr):
            return ir.FloatAttr(attr).value
        raise ValueError

    def to_mlir(self, value):
        return ir.FloatAttr.get(ir.Type.parse(self.mlir_type), float(value))


class _BoolAttr(AttrKind):
    description = "a bool"
    irdl_constraint = 'irdl.base "#builtin.integer"'

    def to_python(self, attr):
        if isinstance(attr, ir.BoolAttr):
            return ir.BoolAttr(attr).value
        raise ValueError

    def to_mlir(self, value):
        return ir.BoolAttr.get(bool(value))


class _I64ArrayAttr(AttrKind):
    description = "an array<i64: ...>"
    irdl_constraint = 'irdl.base "#builtin.dense_array"'

    def to_python(self, attr):
        if isinstance(attr, ir.DenseI64ArrayAttr):
            return tuple(ir.DenseI64ArrayAttr(attr))
        raise ValueError

    def to_mlir(self, value):
        return ir.DenseI64ArrayAttr.get([int(v) for v in value])


class _StrAttr(AttrKind):
    description = "a string"
    irdl_constraint = 'irdl.base "#builtin.string"'

    def to_python(self, attr):
        if isinstance(attr, ir.StringAttr):
            return ir.StringAttr(attr).value
        raise ValueError

    def to_mlir(self, value):
        return ir.StringAttr.get(str(value))


class EnumAttr(_StrAttr):
    """A string attribute with a fixed set of values."""

    def __init__(self, *choices: str):
        self.choices = choices
        self.description = "one of " + ", ".join(f'"{c}"' for c in choices)

    def check(self, value):
        if value not in self.choices:
            return f'"{value}" is not {self.description}'
        return None


class _SymbolRefAttr(AttrKind):
    """A flat symbol reference `@name`; its Python value is the name."""

    description = "a symbol reference (@name)"
    irdl_constraint = 'irdl.base "#builtin.symbol_ref"'

    def to_python(self, attr):
        if isinstance(attr, ir.FlatSymbolRefAttr):
            return ir.FlatSymbolRefAttr(attr).value
        raise ValueError

    def to_mlir(self, value):
        return ir.FlatSymbolRefAttr.get(str(value))


class _TypeAttr(AttrKind):
    """A type; its Python value is the type's view (TensorType, ...)."""

    description = "a type"
    irdl_constraint = 'irdl.base "#builtin.type"'

    def to_python(self, attr):
        if isinstance(attr, ir.TypeAttr):
            try:
                return type_view(ir.TypeAttr(attr).value)
            except VerifyError:
                raise ValueError from None
        raise ValueError

    def to_mlir(self, value):
        return ir.TypeAttr.get(value.to_mlir())


class _DenseElementsAttr(AttrKind):
    """Dense elements (`dense<...> : tensor<...>`); its Python value is a
    NumPy array."""

    description = "dense elements"
    irdl_constraint = 'irdl.base "#builtin.dense_int_or_fp_elements"'

    def to_python(self, attr):
        if isinstance(attr, ir.DenseElementsAttr):
            dense = ir.DenseElementsAttr(attr)
            shaped = ir.ShapedType(dense.type)
            if dense.is_splat:
                value = dense.get_splat_value()
                scalar = (ir.FloatAttr(value).value if isinstance(value, ir.FloatAttr)
                          else ir.IntegerAttr(value).value)
                return np.full(tuple(shaped.shape), scalar)
            return np.array(dense)
        raise ValueError

    def to_mlir(self, value):
        array = np.ascontiguousarray(value)
        return ir.DenseElementsAttr.get(array, type=TensorType(
            array.shape, element_type_name(array.dtype)).to_mlir())


class _StrArrayAttr(AttrKind):
    """An array of strings `["a", "b"]`; its Python value is a tuple."""

    description = "an array of strings"
    irdl_constraint = 'irdl.base "#builtin.array"'

    def to_python(self, attr):
        if isinstance(attr, ir.ArrayAttr) and all(isinstance(a, ir.StringAttr) for a in attr):
            return tuple(ir.StringAttr(a).value for a in attr)
        raise ValueError

    def to_mlir(self, value):
        return ir.ArrayAttr.get([ir.StringAttr.get(str(v)) for v in value])


class _MemorySpaceAttr(AttrKind):
    """A GPU address space `#gpu.address_space<workgroup>`; its Python value
    is the space's name (`global`, `workgroup`, `private`)."""

    description = "a memory space (#gpu.address_space<global|workgroup|private>)"

    def to_python(self, attr):
        text = str(attr)
        if text == "#gpu.address_space<global>":
            return "global"
        name = memory_space_name(attr)
        if name is None or name == "global":
            raise ValueError
        return name

    def to_mlir(self, value):
        return ir.Attribute.parse(f"#gpu.address_space<{value}>")

    def check(self, value):
        if value not in MEMORY_SPACES:
            return f'"{value}" is not one of {", ".join(MEMORY_SPACES)}'
        return None


IntAttr = _IntegerAttr(64)
I32Attr = _IntegerAttr(32)
F32Attr = FloatAttr = _FloatAttr("f32")
F64Attr = _FloatAttr("f64")
BoolAttr = _BoolAttr()
I64ArrayAttr = _I64ArrayAttr()
StrAttr = _StrAttr()
SymbolRefAttr = _SymbolRefAttr()
TypeAttr = _TypeAttr()
DenseElementsAttr = _DenseElementsAttr()
StrArrayAttr = _StrArrayAttr()
MemorySpaceAttr = _MemorySpaceAttr()

_REQUIRED = object()
# The attributes that split operands and results among optional and variadic
# declarations.
SEGMENT_SIZES = "operandSegmentSizes"
RESULT_SEGMENT_SIZES = "resultSegmentSizes"


@dataclass(frozen=True)
class OperandDecl:
    """An operand or result declaration."""

    name: str
    kind: str  # "single", "optional" or "variadic"
    constraint: TypeConstraint = TensorOf()


ResultDecl = OperandDecl


@dataclass(frozen=True)
class AttrDecl:
    name: str
    kind: AttrKind
    default: Any = _REQUIRED

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED


# ---------------------------------------------------------------------------
# Dialects and their registry.


_DIALECTS: dict[str, type["Dialect"]] = {}


def registered_dialects() -> list[type["Dialect"]]:
    """Every dialect defined so far, in definition order."""
    return list(_DIALECTS.values())


def registered_dialect(name: str) -> type["Dialect"] | None:
    """The dialect defined with `name`, or None."""
    return _DIALECTS.get(name)


def lookup_op(name: str) -> type["Op"] | None:
    """The op class of a full op name (`nn.matmul`), or None."""
    dialect, _, mnemonic = name.partition(".")
    found = _DIALECTS.get(dialect)
    return found.ops.get(mnemonic) if found else None


class DialectError(Exception):
    """A dialect cannot be defined or loaded as asked."""


class Dialect:
    """Base of a Python-defined dialect: `class NN(Dialect, name="nn")`."""

    name: ClassVar[str]
    ops: ClassVar[dict[str, type["Op"]]]
    types: ClassVar[dict[str, type["DialectType"]]]
    Operation: ClassVar[type["Op"]]
    Type: ClassVar[type["DialectType"]]

    def __init_subclass__(cls, *, name: str, **kwargs):
        super().__init_subclass__(**kwargs)
        if name in _DIALECTS:
            raise DialectError(f"dialect '{name}' is already defined (by "
                               f"{_DIALECTS[name].__module__}.{_DIALECTS[name].__qualname__})")
        cls.name = name
        cls.ops = {}
        cls.types = {}
        cls.Operation = type("Operation", (Op,), {"dialect": cls, "__module__": cls.__module__})
        cls.Type = type("Type", (DialectType,), {"dialect": cls, "__module__": cls.__module__})
        _DIALECTS[name] = cls

    @classmethod
    def irdl(cls) -> str:
        """The IRDL definition of the dialect, as MLIR text, for upstream
        tools (`mlir-opt --irdl-file=`): each operand, result and required
        attribute is limited to its kind, so that they reject IR of the
        wrong kind. (IRDL in LLVM 22 binds one type to all values of a
        variadic group: upstream tools accept only groups of one type,
        apart from the leading operand of an op whose only non-single
        operand is variadic.)"""
        body = [f"  irdl.type @{t.name} {{\n  }}" for t in cls.types.values()]
        body += [op.irdl() for op in cls.ops.values()]
        return f"irdl.dialect @{cls.name} {{\n" + "\n".join(body) + "\n}\n"

    @classmethod
    def op_class(cls, operation: ir.Operation) -> type["Op"] | None:
        dialect, _, mnemonic = operation.name.partition(".")
        return cls.ops.get(mnemonic) if dialect == cls.name else None

    @classmethod
    def verify(cls, root: ir.Operation) -> bool:
        """Runs the Python rules of every op of this dialect nested in `root`.
        Each violation is emitted as an error at the op's location; returns
        True when there was none."""
        return verify_ops(root, cls.op_class)


def follows_rules(operation: ir.Operation, op_cls: type["Op"]) -> bool:
    """Runs the Python rules of one op of class `op_cls`; a violation is
    emitted as an error at the op. Returns success."""
    try:
        op_cls.from_operation(operation).verify_all()
    except VerifyError as e:
        operation.location.emit_error(f"'{operation.name}' op {e}")
        return False
    except Exception as e:  # a bug in a rule: still reported at the op
        operation.location.emit_error(
            f"'{operation.name}' op internal error in its verifier: "
            f"{type(e).__name__}: {e}")
        return False
    return True


def verify_ops(root: ir.Operation, op_class_of) -> bool:
    """Runs the Python rules of every op under `root` that `op_class_of`
    maps to a class; errors are emitted at the ops. Returns success."""
    ok = True

    def visit(operation):
        nonlocal ok
        op_cls = op_class_of(operation)
        if op_cls is not None:
            ok = follows_rules(operation, op_cls) and ok
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return ok


class DialectType:
    """Base of a type defined by a dialect, without parameters:
    `class TokenType(HW.Type, name="token")` is `!hw.token`. The class is
    also its own constraint: `token: Result[TokenType]`."""

    dialect: ClassVar[type[Dialect]]
    name: ClassVar[str] = ""

    def __init_subclass__(cls, *, name: str | None = None, **kwargs):
        super().__init_subclass__(**kwargs)
        if name is not None:
            cls.name = name
            cls.dialect.types[name] = cls

    @classmethod
    def mnemonic(cls) -> str:
        return f"!{cls.dialect.name}.{cls.name}"

    @classmethod
    def get(cls, context: ir.Context | None = None) -> ir.Type:
        """The type in `context` (default: the current one)."""
        return ir.Type.parse(cls.mnemonic(), context)

    @classmethod
    def view(cls) -> OpaqueType:
        return OpaqueType(cls.mnemonic())


# ---------------------------------------------------------------------------
# Ops.


def _segments(decls: Sequence[OperandDecl], count: int,
              given: Sequence[int] | None) -> list[int]:
    """The number of values of each declaration: the op's segment sizes
    where it has them (IRDL requires them when more than one declaration
    is optional or variadic), else optional declarations take the values
    beyond the single ones first."""
    if given is not None:
        return list(given)
    extra = count - sum(d.kind == "single" for d in decls)
    sizes = []
    for decl in decls:
        size = 1 if decl.kind == "single" else max(
            0, min(extra, 1) if decl.kind == "optional" else extra)
        if decl.kind != "single":
            extra -= size
        sizes.append(size)
    return sizes


def _group(decls: Sequence[OperandDecl], flat: Sequence[Any], sizes: Sequence[int]) -> list:
    """Groups a flat list by declaration: a list for a variadic one, None
    for an absent optional one."""
    groups, i = [], 0
    for decl, size in zip(decls, sizes):
        if decl.kind == "variadic":
            groups.append(list(flat[i:i + size]))
        else:
            groups.append(flat[i] if size else None)
        i += size
    return groups


def _flatten(decls: Sequence[OperandDecl], groups: Sequence[Any], what: str,
             op_name: str) -> tuple[list, list[int]]:
    """The inverse of `_group`: a flat list and the segment sizes."""
    if len(groups) > len(decls) or len(groups) < sum(d.kind == "single" for d in decls):
        raise TypeError(f"{op_name} takes {len(decls)} {what} groups, got {len(groups)}")
    flat, sizes = [], []
    for decl, value in zip(decls, groups):
        if decl.kind == "variadic":
            flat.extend(value)
            sizes.append(len(value))
        elif value is not None:
            flat.append(value)
            sizes.append(1)
        else:
            sizes.append(0)
    sizes.extend(0 for _ in decls[len(groups):])
    return flat, sizes


def _arity(decls: Sequence[OperandDecl], count: int, what: str) -> None:
    singles = sum(d.kind == "single" for d in decls)
    optionals = sum(d.kind == "optional" for d in decls)
    variadic = any(d.kind == "variadic" for d in decls)
    if count < singles or (not variadic and count > singles + optionals):
        if variadic:
            expected = f"at least {singles}"
        elif optionals:
            expected = f"{singles} to {singles + optionals}"
        else:
            expected = str(singles)
        raise VerifyError(f"expects {expected} {what}, got {count}")


def _needs_segments(decls: Sequence[OperandDecl]) -> bool:
    return sum(d.kind != "single" for d in decls) > 1


class Op:
    """Base of a Python-defined op. Subclass through `Dialect.Operation`.

    An instance is a view of one op: its attributes as Python values (defaults
    applied), its operand values and the views of its types. A view can also
    be detached (no MLIR op behind it), which is how builders infer result
    types.
    """

    dialect: ClassVar[type[Dialect]]
    name: ClassVar[str] = ""
    operand_decls: ClassVar[tuple[OperandDecl, ...]] = ()
    result_decls: ClassVar[tuple[OperandDecl, ...]] = ()
    result_names: ClassVar[tuple[str, ...]] = ()
    attr_decls: ClassVar[tuple[AttrDecl, ...]] = ()
    region_names: ClassVar[tuple[str, ...]] = ()
    # Element types of the tensors and memrefs declared without their own.
    element_types: ClassVar[tuple[str, ...]] = ("f32", "f16", "bf16")
    # True when the result type is given by the IR (cast, reshape) instead of
    # being inferred from the operands alone.
    explicit_result_type: ClassVar[bool] = False
    # True when the op's type rule, reference and lowering take '?' dims;
    # other ops reject them at the op, naming the dim.
    dynamic_dims: ClassVar[bool] = False

    def __init_subclass__(cls, *, name: str | None = None, **kwargs):
        super().__init_subclass__(**kwargs)
        hints = _own_annotations(cls)
        operands, results, attrs, regions = [], [], [], []
        # Inherit declarations from the base classes, then add this class's own.
        for base in cls.__mro__[1:]:
            if issubclass(base, Op):
                operands = list(base.operand_decls)
                results = list(base.result_decls)
                attrs = list(base.attr_decls)
                regions = list(base.region_names)
                break
        for field, ann in hints.items():
            value = _value_decl(field, ann)
            if value is not None:
                group = results if issubclass(value[1], Result) else operands
                decl = OperandDecl(field, value[0], value[1].constraint)
                # A subclass may redeclare an inherited operand or result (to
                # narrow its type): it keeps its place.
                names = [d.name for d in group]
                if field in names:
                    group[names.index(field)] = decl
                else:
                    group.append(decl)
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
        cls.result_decls = tuple(results)
        cls.result_names = tuple(d.name for d in results)
        cls.attr_decls = tuple(attrs)
        cls.region_names = tuple(regions)
        for decl in cls.attr_decls:
            setattr(cls, decl.name, _AttrProperty(decl.name))
        if name is not None:
            cls.name = name
            cls.dialect.ops[name] = cls

    # -- construction -----------------------------------------------------

    def __init__(self, attrs: dict[str, Any], operation: ir.Operation | None = None,
                 result_types: Sequence[TypeView] = ()):
        self.attrs = attrs
        self.operation = operation
        self.given_result_types = tuple(result_types)

    @classmethod
    def op_name(cls) -> str:
        return f"{cls.dialect.name}.{cls.name}"

    @classmethod
    def from_operation(cls, operation: ir.Operation) -> "Op":
        """A view of `operation`; raises VerifyError for a malformed
        attribute or a result of the wrong kind."""
        attrs = {}
        present = operation.attributes
        for decl in cls.attr_decls:
            if decl.name in present:
                try:
                    attr = present[decl.name]
                except TypeError:
                    # The bindings cannot view a dense array of elements
                    # other than i1/i8/i16/i32/i64/f32/f64 (`array<i7: 1>`).
                    raise VerifyError(
                        f"attribute '{decl.name}' must be {decl.kind.description}, "
                        "got an array of another element type") from None
                try:
                    value = decl.kind.to_python(attr)
                except ValueError:
                    raise VerifyError(
                        f"attribute '{decl.name}' must be {decl.kind.description}, "
                        f"got {attr}") from None
            elif decl.required:
                raise VerifyError(f"requires attribute '{decl.name}'")
            else:
                value = decl.default
            attrs[decl.name] = value
        view = cls(attrs, operation)
        results = list(operation.results)
        _arity(cls.result_decls, len(results), "result(s)")
        view.given_result_types = tuple(view._views(
            cls.result_decls, [r.type for r in results], view._sizes(RESULT_SEGMENT_SIZES,
                                                                     cls.result_decls,
                                                                     len(results)), "result"))
        return view

    @classmethod
    def detached(cls, result_types: Sequence[TypeView] = (), **attrs) -> "Op":
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
    def build(cls, *operands: Any, result_type: TypeView | None = None,
              result_types: Sequence[TypeView] | None = None,
              loc: ir.Location | None = None, ip: ir.InsertionPoint | None = None, **attrs):
        """Creates the op at the current insertion point. Operands are
        positional in declaration order (a list for a variadic one, None for
        an absent optional one). Result types are inferred, or given as
        `result_type` (one result) or `result_types` (grouped like the
        result declarations; for one variadic declaration, its list).
        Returns the result value of a one-result op,
        the list of results of an op with several, and the op itself when
        it has none. Raises VerifyError before creating anything when a rule
        is violated."""
        given = list(result_types) if result_types is not None else (
            [result_type] if result_type is not None else [])
        if result_types is not None and len(cls.result_decls) == 1:
            given = [given if cls.result_decls[0].kind == "variadic" else given[0]]
        flat_given, result_sizes = (_flatten(cls.result_decls, given, "result", cls.op_name())
                                    if given else ([], None))
        view = cls.detached(flat_given, **attrs)
        flat, sizes = _flatten(cls.operand_decls, operands, "operand", cls.op_name())
        operand_views = view._views(cls.operand_decls, [v.type for v in flat], sizes, "operand")
        view.check_attributes()
        groups = _group(cls.operand_decls, operand_views, sizes)
        view.verify(*groups)
        inferred = view._inferred(groups)
        if inferred is None:
            if not given and cls.result_decls:
                raise TypeError(f"{cls.op_name()} cannot infer its result types: give "
                                "result_type= or result_types=")
            out_types, result_sizes = flat_given, result_sizes
        else:
            out_types, result_sizes = inferred
        attributes = {d.name: d.kind.to_mlir(view.attrs[d.name])
                      for d in cls.attr_decls
                      if d.required or not _same(view.attrs[d.name], d.default)}
        if _needs_segments(cls.operand_decls):
            attributes[SEGMENT_SIZES] = ir.DenseI32ArrayAttr.get(sizes)
        if _needs_segments(cls.result_decls):
            attributes[RESULT_SEGMENT_SIZES] = ir.DenseI32ArrayAttr.get(result_sizes)
        if loc is None:
            try:
                loc = ir.Location.current
            except ValueError:
                loc = ir.Location.unknown(flat[0].context if flat else None)
        with loc:
            operation = ir.Operation.create(cls.op_name(), results=[t.to_mlir() for t in out_types],
                                            operands=flat, attributes=attributes,
                                            regions=len(cls.region_names), ip=ip)
        if not cls.result_decls:
            return operation
        if len(cls.result_decls) == 1 and cls.result_decls[0].kind == "single":
            return operation.results[0]
        return list(operation.results)

    # -- access -------------------------------------------------------------

    def _sizes(self, attribute: str, decls: Sequence[OperandDecl], count: int) -> list[int]:
        given = None
        if self.operation is not None and attribute in self.operation.attributes:
            given = list(ir.DenseI32ArrayAttr(self.operation.attributes[attribute]))
        return _segments(decls, count, given)

    def _views(self, decls: Sequence[OperandDecl], types: Sequence[ir.Type],
               sizes: Sequence[int], what: str) -> list[TypeView]:
        """The views of `types`, each checked by its declaration's constraint."""
        views, index = [], 0
        for decl, size in zip(decls, sizes):
            for _ in range(size):
                try:
                    views.append(decl.constraint.view(types[index], self))
                except VerifyError as e:
                    # The result of a one-result op is just "result".
                    label = what if what == "result" and len(types) == 1 else f"{what} #{index}"
                    text = str(e)
                    separator = " " if text.startswith(("has ", "is ")) else ": "
                    raise VerifyError(f"{label}{separator}{text}") from None
                index += 1
        return views

    def _group(self, flat: Sequence[Any], sizes: Sequence[int] | None = None) -> list[Any]:
        """Groups a flat operand list by declaration."""
        if sizes is None:
            sizes = self._sizes(SEGMENT_SIZES, self.operand_decls, len(flat))
        return _group(self.operand_decls, flat, sizes)

    def _inferred(self, groups) -> tuple[list[TypeView], list[int]] | None:
        """The inferred result types, flat, with their segment sizes; None
        when the op has no rule (its result types are what the IR says)."""
        inferred = self.infer_type(*groups)
        if inferred is None:
            return None
        if len(self.result_decls) == 1:
            inferred = [inferred]
        flat, sizes = _flatten(self.result_decls, list(inferred), "result", self.op_name())
        return flat, sizes

    @property
    def operand_types(self) -> list[TypeView]:
        operation = self.operation
        sizes = self._sizes(SEGMENT_SIZES, self.operand_decls, len(operation.operands))
        return self._views(self.operand_decls, [v.type for v in operation.operands], sizes,
                           "operand")

    @property
    def result_types(self) -> tuple[TypeView, ...]:
        return self.given_result_types

    @property
    def result_type(self) -> TypeView:
        return self.given_result_types[0]

    def operand(self, name: str):
        """The value(s) of a declared operand of the op behind this view."""
        index = [d.name for d in self.operand_decls].index(name)
        return self._group(list(self.operation.operands))[index]

    def result(self, name: str):
        """The value(s) of a declared result of the op behind this view."""
        index = [d.name for d in self.result_decls].index(name)
        results = list(self.operation.results)
        sizes = self._sizes(RESULT_SEGMENT_SIZES, self.result_decls, len(results))
        return _group(self.result_decls, results, sizes)[index]

    # -- rules (overridden by ops) --------------------------------------------

    def infer_type(self, *operand_types):
        """The result type(s) from the operand types (grouped like the
        operands) and the attributes: for an op with one result
        declaration, its type (a list for a variadic one); for several, a
        sequence grouped like them. Raises VerifyError when they do not fit.

        The default gives the results whose constraint allows a single type
        (a dialect type, one scalar type) and None otherwise: no rule, the
        result types are the ones written in the IR."""
        fixed = [d.constraint.fixed_type() for d in self.result_decls]
        if any(d.kind != "single" for d in self.result_decls) or None in fixed:
            return None
        return fixed[0] if len(fixed) == 1 else fixed

    def verify(self, *operand_types) -> None:
        """Rules beyond the type rule (attribute values); raises VerifyError."""

    def reference(self, *arrays):
        """The op's meaning on NumPy arrays."""
        raise NotImplementedError(f"{self.op_name()} has no reference")

    # -- driver -------------------------------------------------------------

    def check_attributes(self) -> None:
        for decl in self.attr_decls:
            problem = decl.kind.check(self.attrs[decl.name])
            if problem:
                raise VerifyError(f"attribute '{decl.name}': {problem}")

    def verify_all(self) -> None:
        """Every rule of the op behind this view; raises VerifyError."""
        operation = self.operation
        count = len(operation.operands)
        _arity(self.operand_decls, count, "operands")
        if count == 0 and any(d.kind == "variadic" for d in self.operand_decls) and not any(
                d.kind == "single" for d in self.operand_decls):
            raise VerifyError("expects at least one operand")
        sizes = self._sizes(SEGMENT_SIZES, self.operand_decls, count)
        views = self._views(self.operand_decls, [v.type for v in operation.operands], sizes,
                            "operand")
        self.check_attributes()
        groups = _group(self.operand_decls, views, sizes)
        self.verify(*groups)
        inferred = self._inferred(groups)
        if inferred is not None and tuple(inferred[0]) != self.given_result_types:
            given = ", ".join(map(str, self.given_result_types))
            expected = ", ".join(map(str, inferred[0]))
            raise VerifyError(f"result type {given} does not match the inferred type {expected}")

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
        """The op's IRDL (see `Dialect.irdl`): one constraint value per
        operand and result (a value shared by two would force their types to
        be equal)."""
        lines = [f"  irdl.operation @{cls.name} {{"]
        operands, results, attrs, regions = [], [], [], []

        def declare(value: str, constraint: TypeConstraint) -> str:
            lines.extend("    " + line for line in constraint.irdl(value))
            return f"%{value}"

        split_head = cls.splits_variadic_head()
        for i, decl in enumerate(cls.operand_decls):
            if decl.kind == "variadic" and split_head:
                # IRDL binds one type to all values of a variadic group, so
                # the first operand gets its own constraint: two operands of
                # different types (concat of different sizes) verify.
                head = declare(f"o{i}_head", decl.constraint)
                operands.append(f"{decl.name}_head: {head}")
            value = declare(f"o{i}", decl.constraint)
            prefix = "" if decl.kind == "single" else decl.kind + " "
            operands.append(f"{decl.name}: {prefix}{value}")
        for i, decl in enumerate(cls.result_decls):
            value = declare(f"r{i}", decl.constraint)
            prefix = "" if decl.kind == "single" else decl.kind + " "
            results.append(f"{decl.name}: {prefix}{value}")
        for i, decl in enumerate(d for d in cls.attr_decls if d.required):
            lines.append(f"    %a{i} = {decl.kind.irdl_constraint}")
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


def _same(value: Any, default: Any) -> bool:
    if isinstance(value, np.ndarray) or isinstance(default, np.ndarray):
        return False
    return value == default


def _value_decl(field: str, ann: Any) -> tuple[str, type] | None:
    """(kind, Operand or Result class) of an operand or result annotation."""
    if isinstance(ann, type) and issubclass(ann, Operand):
        return "single", ann
    if typing.get_origin(ann) is typing.Union:
        args = [a for a in typing.get_args(ann) if a is not type(None)]
        if len(args) == 1 and isinstance(args[0], type) and issubclass(args[0], Operand):
            return "optional", args[0]
    if isinstance(ann, _VariadicMarker):
        item = ann.item
        if isinstance(item, type) and issubclass(item, Operand):
            return "variadic", item
        raise TypeError(f"'{field}': Variadic[...] takes Operand or Result, got {item!r}")
    return None


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
