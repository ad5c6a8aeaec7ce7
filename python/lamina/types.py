"""Types as plain Python values, and the element-type tables.

The dialects, the runtime and the reference interpreter all speak of types
through these classes, so that shape rules and signatures are testable
without MLIR. This module imports nothing from the rest of Lamina.

* `TensorType((2, 3), "f32")` is `tensor<2x3xf32>`: ranked, static;
  `TensorType((None, 768), "f32")` is `tensor<?x768xf32>`: a `None` dim is
  dynamic ('?'), its size known at run time only. A size that was '?' in
  the IR and is known now (the shapes of a call) is a `RuntimeDim`: an
  int that remembers it does not broadcast.
* `MemRefType((16, 16), "f16", "workgroup")` is
  `memref<16x16xf16, #gpu.address_space<workgroup>>`: ranked, static,
  identity layout, in a memory space (`global`, the default, `workgroup`
  or `private`).
* `ScalarType("index")`, `ScalarType("i32")`, `ScalarType("f32")`.
* `OpaqueType("!hw.token")`: any other type, by its text.

`type_view(t)` turns an `ir.Type` into one of them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Sequence, Union

import numpy as np
from mlir import ir

FLOAT_TYPES = ("f32", "f16", "bf16", "f64")
INTEGER_TYPES = ("i1", "i8", "i16", "i32", "i64")
# Unsigned integers: tensors of quantised values (nn.quantize) and the
# operands and results of casts, which the lowerings store as signless
# integers of the same width.
UNSIGNED_TYPES = ("ui8", "ui16", "ui32", "ui64")
# The element types of tensors that cross the NumPy boundary.
ELEMENT_TYPES = FLOAT_TYPES + INTEGER_TYPES + UNSIGNED_TYPES
SCALAR_TYPES = ELEMENT_TYPES + ("index",)


class _NumpyDtypes(Mapping):
    """The NumPy scalar type of each element type name. bf16's is
    ml_dtypes.bfloat16, imported on first use: importing ml_dtypes takes
    longer than the rest of a tool's start-up, and most runs never meet a
    bf16 array."""

    _EAGER = {"f32": np.float32, "f16": np.float16, "f64": np.float64, "i1": np.bool_,
              "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
              "ui8": np.uint8, "ui16": np.uint16, "ui32": np.uint32, "ui64": np.uint64}

    def __getitem__(self, name: str):
        if name == "bf16":
            import ml_dtypes
            return ml_dtypes.bfloat16
        return self._EAGER[name]

    def __iter__(self):
        return iter(ELEMENT_TYPES)

    def __len__(self) -> int:
        return len(ELEMENT_TYPES)


NUMPY_DTYPES = _NumpyDtypes()

# Memory spaces by name, as MLIR writes them on a memref (global: none).
MEMORY_SPACES = {"global": None, "workgroup": "#gpu.address_space<workgroup>",
                 "private": "#gpu.address_space<private>"}


class VerifyError(Exception):
    """A rule of an op or a type is violated; the message names the problem."""


def numpy_dtype(dtype: str) -> np.dtype:
    """The NumPy dtype of an element type name (`bf16` is ml_dtypes.bfloat16)."""
    return np.dtype(NUMPY_DTYPES[dtype])


def element_type_name(dtype) -> str:
    """The element type name (`f32`, `bf16`, `i1`, ...) of a NumPy dtype."""
    dtype = np.dtype(dtype)
    # A bfloat16 array means ml_dtypes is loaded already; any other dtype
    # is named without importing it.
    names = ELEMENT_TYPES if dtype.name == "bfloat16" else _NumpyDtypes._EAGER
    for name in names:
        if np.dtype(NUMPY_DTYPES[name]) == dtype:
            return name
    raise ValueError(f"no element type for {dtype}")


# The largest size, in elements or bytes, that 64-bit code can hold.
INT64_MAX = 2**63 - 1


def _element_bytes(t: ir.Type) -> int:
    """The bytes one element of type `t` takes in memory (8 for a type of
    unknown width, such as index)."""
    if isinstance(t, ir.ShapedType) and ir.ShapedType(t).has_static_shape:
        shaped = ir.ShapedType(t)
        return math.prod(shaped.shape) * _element_bytes(shaped.element_type)
    if isinstance(t, ir.ComplexType):
        return 2 * _element_bytes(ir.ComplexType(t).element_type)
    width = getattr(t, "width", None) if isinstance(t, (ir.IntegerType, ir.FloatType)) else None
    return max(1, (width + 7) // 8) if width else 8


def byte_size(t: ir.Type) -> int | None:
    """The bytes a statically shaped value of type `t` takes, or None for
    other types."""
    if not isinstance(t, ir.ShapedType) or not ir.ShapedType(t).has_static_shape:
        return None
    return _element_bytes(t)


def size_problem(t: ir.Type) -> str | None:
    """Why a shaped type is too large for 64-bit sizes, or None. The
    product of its dims (zeros skipped, since strides still multiply the
    others) times its element size must fit in an int64; past that,
    upstream's layout and bufferization code overflows and aborts."""
    if not isinstance(t, ir.ShapedType) or not ir.ShapedType(t).has_rank:
        return None
    shaped = ir.ShapedType(t)
    elements = math.prod(max(d, 1) for d in shaped.shape)  # dynamic dims are negative
    size = elements * _element_bytes(shaped.element_type)
    if size <= INT64_MAX:
        return None
    if 0 in shaped.shape:
        return (f"type '{t}' is too large: the strides of its nonzero dims ({size} bytes "
                "in all) overflow 64-bit sizes")
    return (f"type '{t}' is too large: {elements} elements of "
            f"{_element_bytes(shaped.element_type)} bytes overflow 64-bit sizes")


def _dims(shape: Sequence[int | None]) -> str:
    return "".join(f"{'?' if d is None else d}x" for d in shape)


class RuntimeDim(int):
    """The size, known at run time, of a dim that is '?' in the IR. It is
    an int everywhere, except to the broadcast rule: the compiled code
    reads a '?' dim at every index, so one of size 1 does not broadcast."""

    def __repr__(self) -> str:
        return f"RuntimeDim({int(self)})"

    def __str__(self) -> str:
        return str(int(self))


def _dim(d) -> int | None:
    """A dim as TensorType holds it: None for '?' (MLIR's dynamic size is
    negative), the int (a RuntimeDim kept as it is) otherwise."""
    if d is None or d < 0:
        return None
    return d if type(d) in (int, RuntimeDim) else int(d)


@dataclass(frozen=True)
class TensorType:
    """A ranked tensor type: `tensor<2x3xf32>`, `tensor<?x768xf32>` (a
    `None` dim is '?')."""

    shape: tuple[int | None, ...]
    dtype: str

    def __post_init__(self):
        object.__setattr__(self, "shape", tuple(_dim(d) for d in self.shape))

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def is_static(self) -> bool:
        return None not in self.shape

    @property
    def dynamic_dims(self) -> tuple[int, ...]:
        """The positions of the '?' dims."""
        return tuple(i for i, d in enumerate(self.shape) if d is None)

    @property
    def is_float(self) -> bool:
        return self.dtype in FLOAT_TYPES

    def with_shape(self, shape: Sequence[int]) -> "TensorType":
        return TensorType(tuple(shape), self.dtype)

    def with_dtype(self, dtype: str) -> "TensorType":
        return TensorType(self.shape, dtype)

    def __str__(self) -> str:
        return f"tensor<{_dims(self.shape)}{self.dtype}>"

    def to_mlir(self) -> ir.Type:
        dynamic = ir.ShapedType.get_dynamic_size()
        return ir.RankedTensorType.get([dynamic if d is None else int(d) for d in self.shape],
                                       ir.Type.parse(self.dtype))

    @staticmethod
    def from_mlir(t: ir.Type, dynamic: bool = False) -> "TensorType":
        """Converts an MLIR type; raises VerifyError for anything but a
        ranked tensor of a supported element type, static unless `dynamic`."""
        if not isinstance(t, ir.RankedTensorType):
            raise VerifyError(f"expected a ranked tensor, got {t}")
        rt = ir.RankedTensorType(t)
        if not dynamic and not rt.has_static_shape:
            first = next(i for i in range(rt.rank) if rt.is_dynamic_dim(i))
            raise VerifyError(f"expected a statically shaped tensor, got {t} "
                              f"(dim {first} is '?')")
        dtype = str(rt.element_type)
        if dtype not in ELEMENT_TYPES:
            raise VerifyError(f"unsupported element type {dtype} in {t}")
        if rt.encoding is not None:
            raise VerifyError(f"tensors with an encoding are not supported, got {t}")
        return TensorType(tuple(rt.shape), dtype)


@dataclass(frozen=True)
class MemRefType:
    """A ranked, statically shaped memref with the identity layout in a
    named memory space: `memref<16x16xf16, #gpu.address_space<workgroup>>`."""

    shape: tuple[int, ...]
    dtype: str
    space: str = "global"

    def __post_init__(self):
        object.__setattr__(self, "shape", tuple(int(d) for d in self.shape))
        if self.space not in MEMORY_SPACES:
            raise ValueError(f"unknown memory space '{self.space}' "
                             f"(known: {', '.join(MEMORY_SPACES)})")

    @property
    def rank(self) -> int:
        return len(self.shape)

    def with_shape(self, shape: Sequence[int]) -> "MemRefType":
        return MemRefType(tuple(shape), self.dtype, self.space)

    def with_space(self, space: str) -> "MemRefType":
        return MemRefType(self.shape, self.dtype, space)

    def __str__(self) -> str:
        attribute = MEMORY_SPACES[self.space]
        return f"memref<{_dims(self.shape)}{self.dtype}{', ' + attribute if attribute else ''}>"

    def to_mlir(self) -> ir.Type:
        return ir.Type.parse(str(self))

    @staticmethod
    def from_mlir(t: ir.Type) -> "MemRefType":
        """Converts an MLIR type; raises VerifyError for anything but a
        ranked, static memref with the identity layout in a known space."""
        if not isinstance(t, ir.MemRefType):
            raise VerifyError(f"expected a memref, got {t}")
        mt = ir.MemRefType(t)
        if not mt.has_static_shape:
            raise VerifyError(f"expected a statically shaped memref, got {t}")
        if not identity_layout(mt):
            raise VerifyError(f"expected a memref with the identity layout, got {t}")
        space = memory_space_name(mt.memory_space)
        if space is None:
            raise VerifyError(f"memory space {mt.memory_space} of {t} is not one of "
                              + ", ".join(MEMORY_SPACES))
        return MemRefType(tuple(mt.shape), str(mt.element_type), space)


def identity_layout(mt: ir.MemRefType) -> bool:
    """Whether memref type `mt` has the identity (row-major, contiguous)
    layout."""
    layout = mt.layout
    if not isinstance(layout, ir.AffineMapAttr):
        return False
    identity = ir.AffineMap.get_identity(mt.rank, context=mt.context)
    return ir.AffineMapAttr(layout).value == identity


def memory_space_name(attribute: ir.Attribute | None) -> str | None:
    """The name of a memref memory space attribute (None: not a known one)."""
    if attribute is None:
        return "global"
    text = str(attribute)
    for name, spelled in MEMORY_SPACES.items():
        if spelled == text:
            return name
    return "global" if text == "0 : i64" else None


@dataclass(frozen=True)
class ScalarType:
    """An integer, float or index scalar type."""

    name: str

    def __str__(self) -> str:
        return self.name

    def to_mlir(self) -> ir.Type:
        return ir.Type.parse(self.name)


@dataclass(frozen=True)
class OpaqueType:
    """Any other type (a dialect's own, such as `!hw.token`), by its text."""

    text: str

    def __str__(self) -> str:
        return self.text

    def to_mlir(self) -> ir.Type:
        return ir.Type.parse(self.text)


TypeView = Union[TensorType, MemRefType, ScalarType, OpaqueType]


def type_view(t: ir.Type) -> TypeView:
    """The Python view of an MLIR type ('?' dims of a tensor are None).
    Raises VerifyError for a tensor or memref that Lamina cannot describe
    (unranked, a dynamic or strided memref, an unknown space)."""
    if isinstance(t, ir.RankedTensorType) or isinstance(t, ir.UnrankedTensorType):
        return TensorType.from_mlir(t, dynamic=True)
    if isinstance(t, (ir.MemRefType, ir.UnrankedMemRefType)):
        return MemRefType.from_mlir(t)
    text = str(t)
    if text in SCALAR_TYPES or isinstance(t, (ir.IntegerType, ir.IndexType, ir.FloatType)):
        return ScalarType(text)
    return OpaqueType(text)
