"""The `nn` dialect: tensor operators with value semantics.

Ops work on ranked tensors of f32, f16 and bf16, and
where an op states it of i1 and of the integers i8 (matmul operands and
data movement), i32 and i64 (signless, as MLIR's builtin integer types;
ops that care treat them as signed two's complement, wrapping on overflow
as NumPy's fixed-width integers do), and follow NumPy's broadcasting. Each op states its type rule
(`infer_type`), its extra checks (`verify`) and its meaning on NumPy arrays
(`reference`).

Ops are grouped in categories by base class, and each category is an
interface that passes use instead of op names, so that an op defined
elsewhere (a plugin's `UnaryElementwiseOp` subclass) is fused like a
built-in one:

* `fusion_kind`: what the op is to a fusion pass: `elementwise`
  (`ElementwiseOp`: unary, binary, select, cast), `reduction`
  (`ReductionOp`), `contraction` (`ContractionOp`: matmul), `convolution`
  (`ConvolutionOp`: conv2d and pooling, windowed ops), `data_movement`
  (`DataMovementOp`) or `opaque` (composites, and ops of no category);
* `iteration_domain(*operand_types)`: the op's loops, one size and one
  iterator type (`parallel` or `reduction`) per loop;
* `indexing_maps(*operand_types)`: for each present operand, then each
  result, the element it touches at each iteration, as an `IndexingMap`
  (MLIR's affine syntax, testable without MLIR; None where no affine map
  says it, as for a reshape);
* `decompose(*operands)` on composites (`gelu`, `silu`, `softmax`,
  `log_softmax`, `layer_norm`, `rms_norm`, `attention`): the op rebuilt
  from primitive nn ops at the current insertion point, computing what its
  reference computes.

Operand types are given grouped like the operands, as for `infer_type`, so
a detached view answers without MLIR:

    MatmulOp.detached().indexing_maps(TensorType((4, 8), "f32"), TensorType((8, 16), "f32"))
    # ((d0, d1, d2) -> (d0, d2), (d0, d1, d2) -> (d2, d1), (d0, d1, d2) -> (d0, d1))

Quantised values are tensors of i8 or ui8 made and read by `nn.quantize`
and `nn.dequantize` (affine, per tensor or per channel, as ONNX's
QuantizeLinear and DequantizeLinear), whose scale and zero point are
operands, rather than a quantised element type carrying its parameters
(upstream's `!quant.uniform`): scales and zero points stay ordinary SSA
values (per-channel ones, ones computed at run time, weights folded at
compile time by `nn-fold-constants` need nothing new), every pass below nn
sees only builtin integer types, and the QDQ form (`dequantize -> matmul
-> quantize`) is visible IR a pass can match. ui8 exists at the nn level
and at the NumPy boundary only: arith computes on signless integers, so
`convert-nn-to-linalg` stores ui8 tensors as i8 tensors of the same bits
and widens them with `arith.extui`.

`nn.fused` is a fusion group formed by `nn-fuse`: a call of an outlined
private function that holds the group's ops.

Ops print and parse in MLIR's generic form:

    %y = "nn.softmax"(%x) {axis = -1 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>

Dynamic dims. The elementwise ops, matmul, the reductions, softmax,
log_softmax, layer_norm, rms_norm, transpose, reshape and fusion groups
take '?' dims (`tensor<?x768xf32>`, `dynamic_dims = True`); the other ops
reject them at the op, naming the dim. Their rules prove what the static
dims allow and leave the rest to run time: a '?' dim broadcasts only
against a static 1 (against a static N it is N, against another '?' it
stays '?', and the sizes must then be equal at run time: a '?' dim of size
1 does not broadcast), and matmul's contraction dims must be equal where
either is '?'. The same rules, given the sizes of a call (`RuntimeDim`s for
the dims that were '?'), compute its result shapes and reject sizes that
break them (`lamina.shapes`).
"""

import math
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np
from mlir import ir
from mlir.dialects import arith

from lamina import scalar
from lamina.scalar import (bitwise_and, bitwise_or, bitwise_xor, compare, cos, erf, exp, log,
                           maximum, minimum, remainder, rsqrt, shift_left, shift_right, sigmoid,
                           sin, sqrt, tanh, where)
from lamina.types import ELEMENT_TYPES, RuntimeDim, TensorType, element_type_name, numpy_dtype

from .opdef import (BoolAttr, Dialect, EnumAttr, FloatAttr, I64ArrayAttr, IntAttr, Operand,
                    Result, SymbolRefAttr, TensorOf, Variadic, VerifyError)


class NN(Dialect, name="nn"):
    """Lamina's operator-level dialect."""


FLOATS = ("f32", "f16", "bf16")
INTEGERS = ("i32", "i64")
# The element types of ops that compute on integers as well.
NUMBERS = FLOATS + INTEGERS
# Elementwise ops and data movement take f64 too (their elements are
# computed on one by one, in their own type); contractions, reductions and
# normalisations, which accumulate in f32, do not.
ELEMENTWISE_FLOATS = FLOATS + ("f64",)
ELEMENTWISE_NUMBERS = ELEMENTWISE_FLOATS + INTEGERS
# The integer operand types of nn.matmul and nn.conv2d, the type each
# accumulates and returns in, and the (lhs or input, rhs or weight) pairs
# they take: signed bytes, or unsigned activations by signed weights
# (AVX512-VNNI's vpdpbusd form, and ONNX Runtime's QDQ models').
MATMUL_INTEGERS = ("i8", "ui8")
MATMUL_ACCUMULATOR = {"i8": "i32", "ui8": "i32"}
INTEGER_OPERAND_PAIRS = (("i8", "i8"), ("ui8", "i8"))
INTEGER_ACCUMULATORS = frozenset(MATMUL_ACCUMULATOR.values())
# Of ops that move elements of any type.
ANY_ELEMENT = ELEMENTWISE_NUMBERS + ("i1",)
# Integers nn.cast alone takes (to and from the others): a frontend computes
# on them widened to i32 or i64 (ui64 as the i64 of its bits).
NARROW_INTEGERS = ("i8", "ui8", "i16", "ui16", "ui32", "ui64")


def _compute(x: np.ndarray) -> np.ndarray:
    """Float arrays are computed on in at least f32 (f16/bf16 references
    round once, at the end); booleans and integers as they are."""
    if x.dtype == np.bool_ or x.dtype == np.float64 or x.dtype.kind in "iu":
        return x
    return x.astype(np.float32)


def _normalize_axis(axis: int, rank: int, what: str = "axis") -> int:
    if not -rank <= axis < rank:
        raise VerifyError(f"{what} {axis} is out of range for rank {rank}")
    return axis % rank


def _shape_text(shape: Sequence[int | None]) -> str:
    return "x".join("?" if d is None else str(d) for d in shape) or "scalar"


def broadcast_shapes(*shapes: tuple[int | None, ...]) -> tuple[int | None, ...]:
    """NumPy's broadcast rule, with '?' dims (None) that broadcast only
    against a static 1 and sizes of '?' dims (RuntimeDim) that never
    broadcast; raises VerifyError naming the shapes."""
    rank = max(len(s) for s in shapes)
    out = []
    for i in range(rank):
        dims = [s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0]
        sizes = [d for d in dims if d is not None and (d != 1 or isinstance(d, RuntimeDim))]
        if len(set(sizes)) > 1:
            if any(isinstance(d, RuntimeDim) for d in sizes):
                raise VerifyError(f"dim {i} of the broadcast differs at run time: "
                                  + " vs ".join(map(str, sizes)) + " (a '?' dim must equal "
                                  "the others: it does not broadcast)")
            raise VerifyError("operands are not broadcast-compatible: "
                              + " vs ".join(_shape_text(s) for s in shapes))
        # A static size wins over a '?' one (which must equal it at run time).
        static = [d for d in sizes if not isinstance(d, RuntimeDim)]
        out.append((static or sizes)[0] if sizes else None if None in dims else 1)
    return tuple(out)


def compatible_shapes(a: Sequence[int | None], b: Sequence[int | None]) -> bool:
    """Whether two shapes may be equal: same rank, and equal where both
    dims are static."""
    return len(a) == len(b) and all(x is None or y is None or x == y for x, y in zip(a, b))


def _same_dtype(*types: TensorType) -> str:
    dtypes = [t.dtype for t in types]
    if len(set(dtypes)) > 1:
        raise VerifyError("element types differ: " + " vs ".join(dtypes))
    return dtypes[0]


def _integer_operands(lhs: TensorType, rhs: TensorType) -> str:
    """The element type of an integer product's operands, `lhs` by `rhs`,
    where they are one of INTEGER_OPERAND_PAIRS."""
    if (lhs.dtype, rhs.dtype) not in INTEGER_OPERAND_PAIRS:
        pairs = ", ".join(f"{a} x {b}" for a, b in INTEGER_OPERAND_PAIRS)
        raise VerifyError(f"integer operands must be {pairs}; these are "
                          f"{lhs.dtype} x {rhs.dtype}")
    return lhs.dtype


def _product_dtype(lhs: TensorType, rhs: TensorType) -> str:
    """The operand type of a product: one float type, or an integer pair."""
    if lhs.dtype in MATMUL_INTEGERS and rhs.dtype in MATMUL_INTEGERS:
        return _integer_operands(lhs, rhs)
    return _same_dtype(lhs, rhs)


def _check_array(name: str, values, length: int, minimum: Optional[int] = None):
    if len(values) != length:
        raise VerifyError(f"'{name}' must have {length} elements, got {len(values)}")
    if minimum is not None and any(v < minimum for v in values):
        raise VerifyError(f"'{name}' values must be >= {minimum}, got {list(values)}")


# ---------------------------------------------------------------------------
# The category interfaces: fusion kinds, iteration domains, indexing maps.

ELEMENTWISE = "elementwise"
REDUCTION = "reduction"
CONTRACTION = "contraction"
CONVOLUTION = "convolution"
DATA_MOVEMENT = "data_movement"
OPAQUE = "opaque"
FUSION_KINDS = (ELEMENTWISE, REDUCTION, CONTRACTION, CONVOLUTION, DATA_MOVEMENT, OPAQUE)
# What a fusion group (`nn.fused`) is built around.
GROUP_KINDS = (ELEMENTWISE, REDUCTION, CONTRACTION, CONVOLUTION)
# The discardable attributes that carry fusion groups below nn: the kind
# of a group on the call of its body (convert-nn-to-linalg), and the group
# and kind on each op of an inlined body (nn-inline-fused), which the CPU
# schedules, the fusion graph and the report read.
FUSION_KIND_ATTRIBUTE = "lamina.fusion_kind"
FUSION_GROUP_ATTRIBUTE = "lamina.fusion_group"

PARALLEL = "parallel"


def fusion_kind(op_class: type) -> str:
    """The fusion kind of an op class: its category's, or `opaque` for an
    op of no category (any dialect)."""
    return getattr(op_class, "fusion_kind", OPAQUE)


@dataclass(frozen=True)
class IterationDomain:
    """The loops of an op: a size and an iterator type (`parallel` or
    `reduction`) per loop."""

    sizes: tuple[int, ...]
    iterators: tuple[str, ...]

    @classmethod
    def parallel(cls, sizes: Sequence[int], reduced: Sequence[int] = ()) -> "IterationDomain":
        """Loops over `sizes`, parallel except the `reduced` ones."""
        return cls(tuple(sizes), tuple(REDUCTION if d in reduced else PARALLEL
                                       for d in range(len(sizes))))

    @property
    def rank(self) -> int:
        return len(self.sizes)

    @property
    def reduction_dims(self) -> tuple[int, ...]:
        return tuple(d for d, kind in enumerate(self.iterators) if kind == REDUCTION)

    @property
    def parallel_dims(self) -> tuple[int, ...]:
        return tuple(d for d, kind in enumerate(self.iterators) if kind == PARALLEL)


def _loop(index: int, factor: int = 1) -> str:
    return f"d{index}" if factor == 1 else f"d{index} * {factor}"


def _sum(*terms: str | int) -> str:
    """An affine sum, without zero constants."""
    kept = [str(t) for t in terms if t != 0]
    return " + ".join(kept) or "0"


@dataclass(frozen=True)
class IndexingMap:
    """Which element of an operand or result an iteration touches: an affine
    map from the loops `d0 .. d{num_loops-1}` to the value's dims, each
    result an affine expression in MLIR's syntax (`d1`, `0`,
    `d2 * 2 + d5`). `str()` is MLIR's form; `to_mlir()` the `ir.AffineMap`."""

    num_loops: int
    results: tuple[str, ...]

    @classmethod
    def of_loops(cls, num_loops: int, loops: Sequence[int]) -> "IndexingMap":
        """The projection reading loop `loops[i]` for dim `i`."""
        return cls(num_loops, tuple(_loop(d) for d in loops))

    @classmethod
    def identity(cls, num_loops: int) -> "IndexingMap":
        return cls.of_loops(num_loops, range(num_loops))

    @classmethod
    def broadcast(cls, shape: Sequence[int], domain: Sequence[int]) -> "IndexingMap":
        """Reads a value of `shape` broadcast over the loops `domain` (NumPy
        rules): aligned to the trailing loops, size-1 dims that grow read
        index 0."""
        offset = len(domain) - len(shape)
        return cls(len(domain), tuple(
            "0" if size == 1 and domain[offset + i] != 1 else _loop(offset + i)
            for i, size in enumerate(shape)))

    def __str__(self) -> str:
        loops = ", ".join(f"d{i}" for i in range(self.num_loops))
        return f"({loops}) -> ({', '.join(self.results)})"

    def to_mlir(self) -> ir.AffineMap:
        """The map in the current context."""
        return ir.AffineMapAttr(ir.Attribute.parse(f"affine_map<{self}>")).value


def _present(operand_types) -> list[TensorType]:
    """The types of the present operands, flat (variadic groups spread,
    absent optional operands left out)."""
    flat = []
    for t in operand_types:
        if isinstance(t, (list, tuple)):
            flat.extend(t)
        elif t is not None:
            flat.append(t)
    return flat


def _scalar(value: float, dtype: str) -> ir.Value:
    """A rank-0 constant tensor (it broadcasts to any shape) at the current
    insertion point."""
    element = ir.Type.parse(dtype)
    tensor_type = ir.RankedTensorType.get([], element)
    return arith.constant(tensor_type, ir.DenseElementsAttr.get_splat(
        tensor_type, ir.FloatAttr.get(element, value)))


def _type_of(value: ir.Value) -> TensorType:
    return TensorType.from_mlir(value.type, dynamic=True)


def _in_f32(value: ir.Value) -> ir.Value:
    """f16 and bf16 values cast to f32: decompositions compute in f32 and
    round once at the end, as the references do."""
    t = _type_of(value)
    if t.dtype in ("f16", "bf16"):
        return CastOp.build(value, result_type=t.with_dtype("f32"))
    return value


def _rounded(value: ir.Value, dtype: str) -> ir.Value:
    """`value` (f32) cast back to the op's element type."""
    t = _type_of(value)
    return value if t.dtype == dtype else CastOp.build(value, result_type=t.with_dtype(dtype))


# ---------------------------------------------------------------------------
# Elementwise.


class ElementwiseOp(NN.Operation):
    """Base of ops computing each element of their result from the
    elements at the same position of their operands (broadcast, NumPy
    rules). One parallel loop per result dim.

    A subclass states its computation on one element once, in the scalar
    form of `lamina.scalar` (`def scalar(self, x): return x * sigmoid(x)`);
    its NumPy reference, its linalg body and its hw epilogue body all come
    from `scalar_tree()`."""

    fusion_kind = ELEMENTWISE
    dynamic_dims = True
    scalar = None

    def scalar_tree(self) -> "scalar.Scalar | None":
        """The op's scalar definition traced on its operands, or None."""
        if self.scalar is None:
            return None
        return scalar.trace(self.scalar, len(self.operand_decls))

    def compute(self, *operands):
        tree = self.scalar_tree()
        if tree is None:
            raise NotImplementedError(f"{self.op_name()} has no scalar definition")
        return scalar.evaluate(tree, operands)

    def iteration_domain(self, *operand_types) -> IterationDomain:
        return IterationDomain.parallel(self.infer_type(*operand_types).shape)

    def indexing_maps(self, *operand_types) -> tuple[IndexingMap, ...]:
        domain = self.infer_type(*operand_types).shape
        return tuple(IndexingMap.broadcast(t.shape, domain) for t in _present(operand_types)) + (
            IndexingMap.identity(len(domain)),)


class UnaryElementwiseOp(ElementwiseOp):
    """Base of ops applied to each element; the result type is the operand's."""

    x: Operand
    result: Result
    element_types = ELEMENTWISE_FLOATS

    def infer_type(self, x):
        return x

    def reference(self, x):
        return self.compute(_compute(x)).astype(x.dtype)


class NegOp(UnaryElementwiseOp, name="neg"):
    """Negation: `-x`.

    Example: %y = "nn.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    element_types = ELEMENTWISE_NUMBERS

    def scalar(self, x):
        return -x


class AbsOp(UnaryElementwiseOp, name="abs"):
    """Absolute value: `|x|`.

    Example: %y = "nn.abs"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    element_types = ELEMENTWISE_NUMBERS

    def scalar(self, x):
        return abs(x)


class ExpOp(UnaryElementwiseOp, name="exp"):
    """Natural exponential: `e^x`.

    Example: %y = "nn.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    def scalar(self, x):
        return exp(x)


class LogOp(UnaryElementwiseOp, name="log"):
    """Natural logarithm.

    Example: %y = "nn.log"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    def scalar(self, x):
        return log(x)


class SqrtOp(UnaryElementwiseOp, name="sqrt"):
    """Square root.

    Example: %y = "nn.sqrt"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    def scalar(self, x):
        return sqrt(x)


class RsqrtOp(UnaryElementwiseOp, name="rsqrt"):
    """Reciprocal square root: `1 / sqrt(x)`.

    Example: %y = "nn.rsqrt"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    def scalar(self, x):
        return rsqrt(x)


class TanhOp(UnaryElementwiseOp, name="tanh"):
    """Hyperbolic tangent.

    Example: %y = "nn.tanh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    def scalar(self, x):
        return tanh(x)


class SigmoidOp(UnaryElementwiseOp, name="sigmoid"):
    """Logistic sigmoid: `1 / (1 + e^-x)`.

    Example: %y = "nn.sigmoid"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    def scalar(self, x):
        return sigmoid(x)


class SinOp(UnaryElementwiseOp, name="sin"):
    """Sine (radians).

    Example: %y = "nn.sin"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    def scalar(self, x):
        return sin(x)


class CosOp(UnaryElementwiseOp, name="cos"):
    """Cosine (radians).

    Example: %y = "nn.cos"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    def scalar(self, x):
        return cos(x)


class ReluOp(UnaryElementwiseOp, name="relu"):
    """Rectified linear unit: `max(x, 0)`.

    Example: %y = "nn.relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    def scalar(self, x):
        return maximum(x, 0)


class ErfOp(UnaryElementwiseOp, name="erf"):
    """Gauss error function.

    Example: %y = "nn.erf"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    def scalar(self, x):
        return erf(x)


class CompositeOp(NN.Operation):
    """Base of ops that have a decomposition into primitive nn ops
    (`decompose`), so that fusion can see inside them. Whole, they are
    opaque to fusion (gelu and silu are elementwise as well)."""

    fusion_kind = OPAQUE

    def decompose(self, *operands: ir.Value):
        """Builds the op from primitive nn ops at the current insertion
        point (operands grouped like the declarations) and returns the
        replacement value (a list for several results). The decomposition
        computes what the reference computes: f16 and bf16 operands are
        cast to f32 and the result rounded once."""
        raise NotImplementedError(f"{self.op_name()} has no decomposition")


class SiluOp(UnaryElementwiseOp, CompositeOp, name="silu"):
    """Sigmoid-weighted linear unit: `x * sigmoid(x)`.

    Example: %y = "nn.silu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    """

    def scalar(self, x):
        return x * sigmoid(x)

    def decompose(self, x):
        dtype = _type_of(x).dtype
        z = _in_f32(x)
        return _rounded(MulOp.build(z, SigmoidOp.build(z)), dtype)


class GeluOp(UnaryElementwiseOp, CompositeOp, name="gelu"):
    """Gaussian error linear unit, exact (`approximate = "none"`) or with the
    tanh approximation.

    Example: %y = "nn.gelu"(%x) {approximate = "tanh"} : (tensor<4xf32>) -> tensor<4xf32>
    """

    approximate: EnumAttr("none", "tanh") = "none"

    def scalar(self, x):
        if self.approximate == "tanh":
            return 0.5 * x * (1 + tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * (x * x * x))))
        return 0.5 * x * (1 + erf(x * (1 / math.sqrt(2))))

    def decompose(self, x):
        dtype = _type_of(x).dtype
        z = _in_f32(x)
        if self.approximate == "tanh":
            cube = MulOp.build(MulOp.build(z, z), z)
            inner = AddOp.build(z, MulOp.build(cube, _scalar(0.044715, "f32")))
            gate = TanhOp.build(MulOp.build(inner, _scalar(math.sqrt(2.0 / math.pi), "f32")))
        else:
            gate = ErfOp.build(MulOp.build(z, _scalar(1.0 / math.sqrt(2.0), "f32")))
        half = MulOp.build(z, _scalar(0.5, "f32"))
        return _rounded(MulOp.build(half, AddOp.build(gate, _scalar(1.0, "f32"))), dtype)


# ---------------------------------------------------------------------------
# Binary elementwise with broadcasting.


class BinaryElementwiseOp(ElementwiseOp):
    """Base of elementwise ops on two operands with NumPy broadcasting; the
    result has the broadcast shape and the operands' element type."""

    lhs: Operand
    rhs: Operand
    result: Result
    element_types = ELEMENTWISE_FLOATS

    def infer_type(self, lhs, rhs):
        dtype = _same_dtype(lhs, rhs)
        return TensorType(broadcast_shapes(lhs.shape, rhs.shape), self.result_dtype(dtype))

    def result_dtype(self, dtype: str) -> str:
        return dtype

    def reference(self, lhs, rhs):
        out = np.asarray(self.compute(_compute(lhs), _compute(rhs)))
        return out.astype(numpy_dtype(self.result_dtype(element_type_name(lhs.dtype))))


class AddOp(BinaryElementwiseOp, name="add"):
    """Addition with broadcasting.

    Example: %z = "nn.add"(%x, %b) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    """

    element_types = ELEMENTWISE_NUMBERS

    def scalar(self, lhs, rhs):
        return lhs + rhs


class SubOp(BinaryElementwiseOp, name="sub"):
    """Subtraction with broadcasting.

    Example: %z = "nn.sub"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    """

    element_types = ELEMENTWISE_NUMBERS

    def scalar(self, lhs, rhs):
        return lhs - rhs


class MulOp(BinaryElementwiseOp, name="mul"):
    """Multiplication with broadcasting.

    Example: %z = "nn.mul"(%x, %y) : (tensor<4xf32>, tensor<1xf32>) -> tensor<4xf32>
    """

    element_types = ELEMENTWISE_NUMBERS

    def scalar(self, lhs, rhs):
        return lhs * rhs


class DivOp(BinaryElementwiseOp, name="div"):
    """Division with broadcasting.

    Example: %z = "nn.div"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    """

    def scalar(self, lhs, rhs):
        return lhs / rhs


class MaximumOp(BinaryElementwiseOp, name="maximum"):
    """Elementwise maximum with broadcasting (NaN propagates).

    Example: %z = "nn.maximum"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    """

    element_types = ELEMENTWISE_NUMBERS

    def scalar(self, lhs, rhs):
        return maximum(lhs, rhs)


class MinimumOp(BinaryElementwiseOp, name="minimum"):
    """Elementwise minimum with broadcasting (NaN propagates).

    Example: %z = "nn.minimum"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    """

    element_types = ELEMENTWISE_NUMBERS

    def scalar(self, lhs, rhs):
        return minimum(lhs, rhs)


class PowOp(BinaryElementwiseOp, name="pow"):
    """Power `lhs ^ rhs` with broadcasting.

    Example: %z = "nn.pow"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    """

    def scalar(self, lhs, rhs):
        return lhs ** rhs


class RemainderOp(BinaryElementwiseOp, name="remainder"):
    """The remainder of the division truncated toward zero, with broadcasting:
    `lhs - rhs * trunc(lhs / rhs)`, exactly (C's fmod), of the sign of `lhs`.

    Example: %z = "nn.remainder"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    """

    def scalar(self, lhs, rhs):
        return remainder(lhs, rhs)


class IntegerBinaryOp(BinaryElementwiseOp):
    """Base of the ops on the bits of integers (two's complement)."""

    element_types = INTEGERS


class BitwiseAndOp(IntegerBinaryOp, name="bitwise_and"):
    """Bitwise and with broadcasting.

    Example: %z = "nn.bitwise_and"(%x, %y) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    """

    def scalar(self, lhs, rhs):
        return bitwise_and(lhs, rhs)


class BitwiseOrOp(IntegerBinaryOp, name="bitwise_or"):
    """Bitwise or with broadcasting.

    Example: %z = "nn.bitwise_or"(%x, %y) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    """

    def scalar(self, lhs, rhs):
        return bitwise_or(lhs, rhs)


class BitwiseXorOp(IntegerBinaryOp, name="bitwise_xor"):
    """Bitwise exclusive or with broadcasting.

    Example: %z = "nn.bitwise_xor"(%x, %y) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    """

    def scalar(self, lhs, rhs):
        return bitwise_xor(lhs, rhs)


class ShiftLeftOp(IntegerBinaryOp, name="shift_left"):
    """`lhs` shifted left by `rhs` bits, with broadcasting; the bits past
    the width are dropped, and an amount outside [0, width) gives 0.

    Example: %z = "nn.shift_left"(%x, %n) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    """

    def scalar(self, lhs, rhs):
        return shift_left(lhs, rhs)


class ShiftRightOp(IntegerBinaryOp, name="shift_right"):
    """`lhs` shifted right by `rhs` bits, with broadcasting, filled with
    copies of the sign bit (arithmetic); an amount outside [0, width) gives
    the sign's copies alone (0 or -1).

    Example: %z = "nn.shift_right"(%x, %n) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    """

    def scalar(self, lhs, rhs):
        return shift_right(lhs, rhs)


class CompareOp(BinaryElementwiseOp, name="compare"):
    """Elementwise comparison with broadcasting; the result is an i1 tensor.
    Integers compare as signed.

    Example: %m = "nn.compare"(%x, %y) {predicate = "lt"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    """

    predicate: EnumAttr("eq", "ne", "lt", "le", "gt", "ge")
    element_types = ELEMENTWISE_NUMBERS

    def result_dtype(self, dtype):
        return "i1"

    def scalar(self, lhs, rhs):
        return compare(self.predicate, lhs, rhs)


class SelectOp(ElementwiseOp, name="select"):
    """Elementwise choice `cond ? a : b`, broadcasting all three operands.

    Example: %z = "nn.select"(%m, %x, %y) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    """

    cond: Operand[TensorOf("i1")]
    lhs: Operand
    rhs: Operand
    result: Result
    element_types = ANY_ELEMENT

    def infer_type(self, cond, lhs, rhs):
        dtype = _same_dtype(lhs, rhs)
        return TensorType(broadcast_shapes(cond.shape, lhs.shape, rhs.shape), dtype)

    def scalar(self, cond, lhs, rhs):
        return where(cond, lhs, rhs)

    def reference(self, cond, lhs, rhs):
        return np.asarray(self.compute(cond, _compute(lhs), _compute(rhs))).astype(lhs.dtype)


class CastOp(ElementwiseOp, name="cast"):
    """Element type conversion; the target type is the result type.
    Float or integer to i1 is `x != 0`; i1 to a number gives 0 or 1; float
    to integer rounds toward zero (as C and NumPy; NaN and values out of
    the integer's range give an unspecified value); integer to float rounds
    to nearest; integers narrow by truncation and widen by sign extension,
    unsigned ones (ui8 to ui64) by zero extension.

    Example: %y = "nn.cast"(%x) : (tensor<4xf32>) -> tensor<4xf16>
    """

    x: Operand
    result: Result
    element_types = ANY_ELEMENT + NARROW_INTEGERS
    explicit_result_type = True

    def infer_type(self, x):
        target = self.result_type
        if not compatible_shapes(target.shape, x.shape):
            raise VerifyError(f"cast changes the shape: {x} to {target}")
        return x.with_dtype(target.dtype)

    def reference(self, x):
        target = numpy_dtype(self.result_type.dtype)
        if target == np.bool_:
            return _compute(x) != 0
        return _compute(x).astype(target)


# ---------------------------------------------------------------------------
# Affine quantisation (why ops and not a quantised type: the module docstring).

QUANTIZED = ("i8", "ui8")
_QUANTIZED_RANGE = {"i8": (-128, 127), "ui8": (0, 255)}


def quantized_range(dtype: str) -> tuple[int, int]:
    """The least and greatest values of a quantised element type."""
    return _QUANTIZED_RANGE[dtype]


class AffineQuantizationOp(NN.Operation):
    """Base of `nn.quantize` and `nn.dequantize`: a real value `r` and its
    quantised value `q` are related by `r = (q - zero_point) * scale`.
    `scale` (f32) and `zero_point` (i8 or ui8, the quantised type) are
    rank 0 (per tensor) or rank 1 (per channel: one pair per index along
    `axis` of `x`, default 1 as in ONNX); they have the same shape."""

    x: Operand
    scale: Operand[TensorOf("f32")]
    zero_point: Operand[TensorOf(*QUANTIZED)]
    result: Result
    axis: IntAttr = 1
    element_types = ("f32",) + QUANTIZED

    def check_parameters(self, x: TensorType, scale: TensorType, zero_point: TensorType) -> None:
        if scale.shape != zero_point.shape:
            raise VerifyError(f"scale and zero point shapes differ: {scale} vs {zero_point}")
        if scale.rank > 1:
            raise VerifyError(f"scale must be rank 0 (per tensor) or 1 (per channel), got {scale}")
        if scale.rank == 1:
            axis = _normalize_axis(self.axis, x.rank)
            if scale.shape[0] != x.shape[axis]:
                raise VerifyError(f"per-channel scale has {scale.shape[0]} elements but "
                                  f"axis {self.axis} of {x} has {x.shape[axis]}")

    def channel_axis(self, x_rank: int) -> int | None:
        """The axis of `x` the parameters run along, or None per tensor."""
        scale = self.operand_types[1]
        return self.axis % x_rank if scale.rank == 1 else None

    def along_axis(self, parameter: np.ndarray, x: np.ndarray) -> np.ndarray:
        """A scale or zero point shaped to broadcast against `x`."""
        if parameter.ndim == 0:
            return parameter
        axis = self.axis % x.ndim
        return parameter.reshape([-1 if d == axis else 1 for d in range(x.ndim)])


class QuantizeOp(AffineQuantizationOp, name="quantize"):
    """Affine quantisation, as ONNX's QuantizeLinear: `saturate(round(x /
    scale) + zero_point)`, the quotient computed in f32 and rounded half to
    even, then saturated to the range of the zero point's type (i8:
    [-128, 127], ui8: [0, 255]), which is the result's element type. +inf
    saturates to the greatest value, -inf to the least; NaN (which ONNX
    leaves undefined for integers) gives the least value, as ONNX Runtime's
    x86 kernels do.

    Example: %q = "nn.quantize"(%x, %scale, %zp) : (tensor<4x8xf32>, tensor<f32>, tensor<i8>) -> tensor<4x8xi8>
    """

    x: Operand[TensorOf("f32")]

    def infer_type(self, x, scale, zero_point):
        self.check_parameters(x, scale, zero_point)
        return x.with_dtype(zero_point.dtype)

    def reference(self, x, scale, zero_point):
        low, high = quantized_range(element_type_name(zero_point.dtype))
        quotient = x.astype(np.float32) / self.along_axis(scale.astype(np.float32), x)
        shifted = np.rint(quotient) + self.along_axis(zero_point.astype(np.float32), x)
        with np.errstate(invalid="ignore"):
            saturated = np.where(np.isnan(shifted), np.float32(low),
                                 np.clip(shifted, np.float32(low), np.float32(high)))
        return saturated.astype(zero_point.dtype)


class DequantizeOp(AffineQuantizationOp, name="dequantize"):
    """Affine dequantisation, as ONNX's DequantizeLinear: `(x - zero_point)
    * scale` in f32, `x` and `zero_point` of the same type (i8 or ui8); the
    difference is exact, the product rounds once.

    Example: %x = "nn.dequantize"(%q, %scale, %zp) {axis = 0 : i64} : (tensor<4x8xi8>, tensor<4xf32>, tensor<4xi8>) -> tensor<4x8xf32>
    """

    x: Operand[TensorOf(*QUANTIZED)]

    def infer_type(self, x, scale, zero_point):
        if x.dtype != zero_point.dtype:
            raise VerifyError(f"zero point type {zero_point.dtype} differs from the quantised "
                              f"type {x.dtype}")
        self.check_parameters(x, scale, zero_point)
        return x.with_dtype("f32")

    def reference(self, x, scale, zero_point):
        difference = x.astype(np.int32) - self.along_axis(zero_point.astype(np.int32), x)
        return (difference.astype(np.float32)
                * self.along_axis(scale.astype(np.float32), x)).astype(np.float32)


# ---------------------------------------------------------------------------
# Contractions and windows.


class ContractionOp(NN.Operation):
    """Base of ops that multiply operands and sum the products over
    reduction loops (matrix products): expensive producers, whose
    elementwise consumers fuse as epilogues."""

    fusion_kind = CONTRACTION


# The layouts of 4-D activations, each the permutation of NCHW's dims it
# stores them in.
LAYOUTS = {"NCHW": (0, 1, 2, 3), "NHWC": (0, 2, 3, 1)}


class ConvolutionOp(NN.Operation):
    """Base of windowed ops (convolutions and pooling): each result element
    folds a window of the input, over reduction loops. The indexing maps
    read the padded input (padding is applied first).

    Their input and result are NCHW, or channels-last with `layout =
    "NHWC"`: the same op on the transposed activations (attributes,
    weights and bias keep their NCHW meaning)."""

    fusion_kind = CONVOLUTION

    def nchw_shape(self, shape: Sequence[int]) -> tuple[int, ...]:
        """An activation's shape in this op's layout as NCHW."""
        permutation = LAYOUTS[self.layout]
        nchw = [0] * 4
        for position, dim in enumerate(permutation):
            nchw[dim] = shape[position]
        return tuple(nchw)

    def in_layout(self, t: TensorType) -> TensorType:
        """An NCHW activation type in this op's layout."""
        return t.with_shape([t.shape[d] for d in LAYOUTS[self.layout]])

    def nchw_input(self, x: TensorType, what: str) -> TensorType:
        if x.rank != 4:
            raise VerifyError(f"{what} input must be {self.layout} (rank 4), got {x}")
        return x.with_shape(self.nchw_shape(x.shape))

    def layout_maps(self, maps: tuple[IndexingMap, ...]) -> tuple[IndexingMap, ...]:
        """The NCHW indexing maps of the input (first) and result (last)
        permuted into this op's layout."""
        permutation = LAYOUTS[self.layout]

        def permuted(m):
            return IndexingMap(m.num_loops, tuple(m.results[d] for d in permutation))

        return (permuted(maps[0]),) + maps[1:-1] + (permuted(maps[-1]),)

    def computed_in_nchw(self, compute, x, *others):
        """The reference `compute(x_nchw, *others)` with `x` and the
        result in this op's layout."""
        permutation = LAYOUTS[self.layout]
        inverse = tuple(permutation.index(d) for d in range(4))
        return np.transpose(compute(np.transpose(x, inverse), *others), permutation)


# tf32, the tensor cores' format for f32 operands: f32's sign, exponent
# and top 10 of its 23 mantissa bits (TF32_MASK keeps them); TF32_HALF is
# half the weight of the 13 bits it drops.
TF32_MASK = 0xFFFFE000
TF32_HALF = 0x1000


def round_tf32(x: np.ndarray) -> np.ndarray:
    """f32 values rounded to the nearest tf32, ties away from zero (as
    cvt.rna.tf32.f32 rounds): half the dropped bits' weight added to the
    magnitude, then the dropped bits cleared."""
    bits = np.ascontiguousarray(x, np.float32).view(np.uint32) + np.uint32(TF32_HALF)
    return (bits & np.uint32(TF32_MASK)).view(np.float32)


class MatmulOp(ContractionOp, name="matmul"):
    """Matrix product `[..., M, K] x [..., K, N] -> [..., M, N]`; batch dims
    broadcast.

    `precision` is what the product may trade for speed: "f32" (the
    default) computes products and sums in f32 (f16 and bf16 operands are
    exact in it); "tf32", for f32 operands, lets them be rounded to tf32
    (10 mantissa bits, to nearest) first, as PyTorch's `allow_tf32` does:
    the reference rounds them so, and so do the cuda targets' tensor
    cores (one tf32 product instead of the three that f32 accuracy
    takes); the cpu target ignores it and computes in f32, within about
    1e-3 relative of the reference.

    Integer operands are i8 x i8, or ui8 x i8 (unsigned activations,
    signed weights), and give an i32 result: the products and their sum
    are exact in i32 and wrap on overflow (an i8 result would overflow for
    most K), as ONNX's MatMulInteger defines it. Float and integer
    operands do not mix.

    Example: %c = "nn.matmul"(%a, %b) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    """

    lhs: Operand
    rhs: Operand
    result: Result
    precision: EnumAttr("f32", "tf32") = "f32"

    element_types = FLOATS + MATMUL_INTEGERS
    dynamic_dims = True

    def infer_type(self, lhs, rhs):
        dtype = _product_dtype(lhs, rhs)
        if self.precision == "tf32" and dtype != "f32":
            raise VerifyError(f"precision = \"tf32\" rounds f32 operands; these are {dtype}")
        if lhs.rank < 2 or rhs.rank < 2:
            raise VerifyError(f"matmul operands must have rank >= 2, got {lhs} and {rhs}")
        # '?' contraction dims are checked at run time.
        if None not in (lhs.shape[-1], rhs.shape[-2]) and lhs.shape[-1] != rhs.shape[-2]:
            raise VerifyError(
                f"matmul contraction dims differ: {lhs.shape[-1]} vs {rhs.shape[-2]}")
        try:
            batch = broadcast_shapes(lhs.shape[:-2], rhs.shape[:-2])
        except VerifyError:
            raise VerifyError(f"matmul batch dims are not broadcast-compatible: "
                              f"{list(lhs.shape[:-2])} vs {list(rhs.shape[:-2])}") from None
        return TensorType(batch + (lhs.shape[-2], rhs.shape[-1]),
                          MATMUL_ACCUMULATOR.get(dtype, dtype))

    def iteration_domain(self, lhs, rhs) -> IterationDomain:
        """Loops `(batch..., m, n, k)`; k is the reduction."""
        result = self.infer_type(lhs, rhs).shape
        return IterationDomain.parallel(result + (lhs.shape[-1],), reduced=(len(result),))

    def indexing_maps(self, lhs, rhs) -> tuple[IndexingMap, ...]:
        result = self.infer_type(lhs, rhs).shape
        batch = result[:-2]
        loops = len(result) + 1
        m, n, k = len(batch), len(batch) + 1, len(batch) + 2

        def operand(shape, rows, cols):
            head = IndexingMap.broadcast(shape[:-2], batch).results
            return IndexingMap(loops, head + (_loop(rows), _loop(cols)))

        return (operand(lhs.shape, m, k), operand(rhs.shape, k, n),
                IndexingMap.of_loops(loops, range(len(result))))

    def reference(self, lhs, rhs):
        if lhs.dtype.kind in "iu":
            # Exact in i64 for any K below 2**33, then wrapped to i32.
            return np.matmul(lhs.astype(np.int64), rhs.astype(np.int64)).astype(np.int32)
        a, b = _compute(lhs), _compute(rhs)
        if self.precision == "tf32":
            a, b = round_tf32(a), round_tf32(b)
        return np.matmul(a, b).astype(lhs.dtype)


def _window_out(size: int, kernel: int, stride: int, dilation: int, pad: int) -> int:
    return (size + pad - dilation * (kernel - 1) - 1) // stride + 1


class Conv2dOp(ConvolutionOp, name="conv2d"):
    """2-D convolution (cross-correlation), NCHW input (NHWC with `layout =
    "NHWC"`), OIHW weights, with optional bias `[O]`, strides, padding
    (top, left, bottom, right), dilations and groups.

    Integer operands are i8 x i8, or ui8 x i8 (unsigned activations,
    signed weights), as nn.matmul's, and give an i32 result, exact and
    wrapping (as ONNX's ConvInteger); padding holds zeros, and there is no
    bias (an integer bias is an `nn.add` on the i32 result).

    Example: %y = "nn.conv2d"(%x, %w) {strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
    """

    x: Operand
    weight: Operand
    bias: Optional[Operand]
    result: Result
    strides: I64ArrayAttr = (1, 1)
    padding: I64ArrayAttr = (0, 0, 0, 0)
    dilations: I64ArrayAttr = (1, 1)
    groups: IntAttr = 1
    layout: EnumAttr(*LAYOUTS) = "NCHW"

    element_types = FLOATS + MATMUL_INTEGERS

    def verify(self, x, weight, bias):
        _check_array("strides", self.strides, 2, 1)
        _check_array("padding", self.padding, 4, 0)
        _check_array("dilations", self.dilations, 2, 1)
        if self.groups < 1:
            raise VerifyError(f"'groups' must be >= 1, got {self.groups}")

    def infer_type(self, x, weight, bias):
        if x.dtype in MATMUL_INTEGERS or weight.dtype in MATMUL_INTEGERS:
            dtype = _product_dtype(x, weight)
            if bias is not None:
                raise VerifyError(f"an integer conv2d takes no bias (add it to the "
                                  f"{MATMUL_ACCUMULATOR[dtype]} result), got {bias}")
        else:
            dtype = _same_dtype(*[t for t in (x, weight, bias) if t is not None])
        x = self.nchw_input(x, "conv2d")
        if weight.rank != 4:
            raise VerifyError(f"conv2d weight must be OIHW (rank 4), got {weight}")
        n, c, h, w = x.shape
        o, ci, kh, kw = weight.shape
        if c % self.groups or o % self.groups:
            raise VerifyError(f"conv2d channels ({c} in, {o} out) are not divisible by "
                              f"groups = {self.groups}")
        if ci * self.groups != c:
            raise VerifyError(f"conv2d input channels differ: input has {c}, weight expects "
                              f"{ci} x {self.groups} groups")
        if bias is not None and bias.shape != (o,):
            raise VerifyError(f"conv2d bias must have shape [{o}], got {bias}")
        top, left, bottom, right = self.padding
        oh = _window_out(h, kh, self.strides[0], self.dilations[0], top + bottom)
        ow = _window_out(w, kw, self.strides[1], self.dilations[1], left + right)
        if oh < 1 or ow < 1:
            raise VerifyError(f"conv2d kernel {kh}x{kw} does not fit the padded input {h}x{w}")
        return self.in_layout(TensorType((n, o, oh, ow), MATMUL_ACCUMULATOR.get(dtype, dtype)))

    def iteration_domain(self, x, weight, bias) -> IterationDomain:
        """Loops `(n, o, oh, ow, c, kh, kw)`, and with groups `(n, g, o, oh,
        ow, c, kh, kw)` with `o` and `c` counted within a group; the last
        three are reductions."""
        n, out, oh, ow = self.nchw_shape(self.infer_type(x, weight, bias).shape)
        per_group, kh, kw = weight.shape[1:]
        outer = (n, out, oh, ow) if self.groups == 1 else (
            n, self.groups, out // self.groups, oh, ow)
        return IterationDomain.parallel(outer + (per_group, kh, kw),
                                        reduced=range(len(outer), len(outer) + 3))

    def indexing_maps(self, x, weight, bias) -> tuple[IndexingMap, ...]:
        (sh, sw), (dh, dw) = self.strides, self.dilations
        if self.groups == 1:
            n, o, oh, ow, c, kh, kw = range(7)
            loops, channel, in_channel = 7, _loop(o), _loop(c)
        else:
            n, g, o, oh, ow, c, kh, kw = range(8)
            out_group = weight.shape[0] // self.groups
            loops, channel = 8, _sum(_loop(g, out_group), _loop(o))
            in_channel = _sum(_loop(g, weight.shape[1]), _loop(c))
        maps = [IndexingMap(loops, (_loop(n), in_channel, _sum(_loop(oh, sh), _loop(kh, dh)),
                                    _sum(_loop(ow, sw), _loop(kw, dw)))),
                IndexingMap(loops, (channel, _loop(c), _loop(kh), _loop(kw)))]
        if bias is not None:
            maps.append(IndexingMap(loops, (channel,)))
        return self.layout_maps(
            tuple(maps) + (IndexingMap(loops, (_loop(n), channel, _loop(oh), _loop(ow))),))

    def reference(self, x, weight, bias):
        return self.computed_in_nchw(self._reference_nchw, x, weight, bias)

    def _reference_nchw(self, x, weight, bias):
        dtype = x.dtype
        if dtype.kind in "iu":
            # Exact in i64 (f64 sums of byte products are exact below
            # 2**53), then wrapped to i32.
            exact = self._window_sums(x.astype(np.float64), weight.astype(np.float64))
            return exact.astype(np.int64).astype(np.int32)
        out = self._window_sums(_compute(x), _compute(weight))
        if bias is not None:
            out += _compute(bias)[None, :, None, None]
        return out.astype(dtype)

    def _window_sums(self, x, weight):
        """The convolution of NCHW `x` and OIHW `weight` in their (float)
        type, without bias."""
        top, left, bottom, right = self.padding
        xp = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
        x_type = self.in_layout(TensorType(x.shape, "f32"))
        out_shape = self.nchw_shape(
            self.infer_type(x_type, TensorType(weight.shape, "f32"), None).shape)
        n, o, oh, ow = out_shape
        _, ci, kh, kw = weight.shape
        sh, sw = self.strides
        dh, dw = self.dilations
        g = self.groups
        out = np.zeros(out_shape, x.dtype)
        for i in range(kh):
            for j in range(kw):
                patch = xp[:, :, i * dh: i * dh + sh * (oh - 1) + 1: sh,
                           j * dw: j * dw + sw * (ow - 1) + 1: sw]
                patch = patch.reshape(n, g, ci, oh, ow)
                wk = weight[:, :, i, j].reshape(g, o // g, ci)
                out += np.einsum("ngchw,goc->ngohw", patch, wk).reshape(n, o, oh, ow)
        return out


class Pool2dOp(ConvolutionOp):
    """Base of 2-D pooling over NCHW input (NHWC with `layout = "NHWC"`)
    with `kernel`, `strides` and `padding` (top, left, bottom, right).
    A subclass's `pooled(x)` is its reference on NCHW arrays."""

    x: Operand
    result: Result
    kernel: I64ArrayAttr
    strides: I64ArrayAttr = (1, 1)
    padding: I64ArrayAttr = (0, 0, 0, 0)
    layout: EnumAttr(*LAYOUTS) = "NCHW"

    def verify(self, x):
        _check_array("kernel", self.kernel, 2, 1)
        _check_array("strides", self.strides, 2, 1)
        _check_array("padding", self.padding, 4, 0)

    def infer_type(self, x):
        n, c, h, w = self.nchw_input(x, "pooling").shape
        top, left, bottom, right = self.padding
        kh, kw = self.kernel
        oh = _window_out(h, kh, self.strides[0], 1, top + bottom)
        ow = _window_out(w, kw, self.strides[1], 1, left + right)
        if oh < 1 or ow < 1:
            raise VerifyError(f"pooling window {kh}x{kw} does not fit the padded input {h}x{w}")
        return self.in_layout(TensorType((n, c, oh, ow), x.dtype))

    def iteration_domain(self, x) -> IterationDomain:
        """Loops `(n, c, oh, ow, kh, kw)`; the window loops are reductions."""
        return IterationDomain.parallel(self.nchw_shape(self.infer_type(x).shape)
                                        + tuple(self.kernel), reduced=(4, 5))

    def indexing_maps(self, x) -> tuple[IndexingMap, ...]:
        sh, sw = self.strides
        return self.layout_maps(
            (IndexingMap(6, ("d0", "d1", _sum(_loop(2, sh), "d4"), _sum(_loop(3, sw), "d5"))),
             IndexingMap.of_loops(6, range(4))))

    def reference(self, x):
        return self.computed_in_nchw(self.pooled, x)

    def windows(self, x, pad_value):
        """The window taps of `x` (NCHW), each a strided slice."""
        top, left, bottom, right = self.padding
        xp = np.pad(_compute(x), ((0, 0), (0, 0), (top, bottom), (left, right)),
                    constant_values=pad_value)
        x_type = self.in_layout(TensorType(x.shape, "f32"))
        _, _, oh, ow = self.nchw_shape(self.infer_type(x_type).shape)
        sh, sw = self.strides
        kh, kw = self.kernel
        return [xp[:, :, i: i + sh * (oh - 1) + 1: sh, j: j + sw * (ow - 1) + 1: sw]
                for i in range(kh) for j in range(kw)]


class MaxPool2dOp(Pool2dOp, name="max_pool2d"):
    """2-D max pooling; padding never wins the max.

    Example: %y = "nn.max_pool2d"(%x) {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
    """

    def pooled(self, x):
        return np.maximum.reduce(self.windows(x, -np.inf)).astype(x.dtype)


class AvgPool2dOp(Pool2dOp, name="avg_pool2d"):
    """2-D average pooling; the divisor is the full window size (padding
    counts as zeros).

    Example: %y = "nn.avg_pool2d"(%x) {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
    """

    def pooled(self, x):
        windows = self.windows(x, 0.0)
        return (np.add.reduce(windows) / len(windows)).astype(x.dtype)


# ---------------------------------------------------------------------------
# Reductions.


class ReductionOp(NN.Operation):
    """Base of reductions over `axes` (negative allowed); `keepdims` keeps
    the reduced dims as size 1.

    A subclass states its fold in the scalar form of `lamina.scalar`: the
    accumulator's start (`identity`), the step (`combine(self, acc, x)`:
    `acc + x`, `acc * x`, `maximum(acc, x)` or `minimum(acc, x)`) and what
    becomes of the total (`finish(self, total, count)`, by default the
    total). f16 and bf16 accumulate in f32 and round once at the end; the
    NumPy reference and the linalg lowering both come from these."""

    x: Operand
    result: Result
    axes: I64ArrayAttr
    keepdims: BoolAttr = False
    fusion_kind = REDUCTION
    dynamic_dims = True
    identity = 0.0

    def combine(self, acc, x):
        raise NotImplementedError(f"{self.op_name()} has no combining step")

    def finish(self, total, count: int):
        return total

    def combine_kind(self) -> str:
        """The fold's step: add, mul, maximum or minimum."""
        return scalar.combine_kind(scalar.trace(self.combine, 2))

    def finish_tree(self, count: int) -> "scalar.Scalar":
        """`finish` traced on the total, for `count` folded elements."""
        return scalar.trace(lambda total: self.finish(total, count), 1)

    def normalized_axes(self, rank: int) -> tuple[int, ...]:
        axes = tuple(_normalize_axis(a, rank, "reduction axis") for a in self.axes)
        if len(set(axes)) != len(axes):
            raise VerifyError(f"reduction axes repeat: {list(self.axes)}")
        return tuple(sorted(axes))

    def infer_type(self, x):
        try:
            self.combine_kind()
        except ValueError as error:
            raise VerifyError(str(error)) from None
        if not self.axes:
            raise VerifyError("reduction needs at least one axis")
        axes = self.normalized_axes(x.rank)
        if self.keepdims:
            shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape))
        else:
            shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
        return x.with_shape(shape)

    def iteration_domain(self, x) -> IterationDomain:
        """One loop per operand dim; the reduced axes are reductions."""
        return IterationDomain.parallel(x.shape, reduced=self.normalized_axes(x.rank))

    def indexing_maps(self, x) -> tuple[IndexingMap, ...]:
        axes = self.normalized_axes(x.rank)
        if self.keepdims:
            result = IndexingMap(x.rank, tuple("0" if d in axes else _loop(d)
                                               for d in range(x.rank)))
        else:
            result = IndexingMap.of_loops(x.rank, [d for d in range(x.rank) if d not in axes])
        return IndexingMap.identity(x.rank), result

    def reference(self, x):
        axes = self.normalized_axes(x.ndim)
        return np.asarray(self.compute(_compute(x), axes)).astype(x.dtype)

    def compute(self, x, axes):
        total = scalar.reduce_numpy(self.combine_kind(), x, axes, self.keepdims)
        count = math.prod(x.shape[a] for a in axes)
        return scalar.evaluate(self.finish_tree(count), [total])


class ReduceSumOp(ReductionOp, name="reduce_sum"):
    """Sum over axes (integers accumulate in their own type, wrapping).

    Example: %s = "nn.reduce_sum"(%x) {axes = array<i64: -1>} : (tensor<2x8xf32>) -> tensor<2xf32>
    """

    element_types = NUMBERS

    def combine(self, acc, x):
        return acc + x


class ReduceMaxOp(ReductionOp, name="reduce_max"):
    """Maximum over axes.

    Example: %s = "nn.reduce_max"(%x) {axes = array<i64: 0>, keepdims = true} : (tensor<2x8xf32>) -> tensor<1x8xf32>
    """

    element_types = NUMBERS

    identity = float("-inf")

    def combine(self, acc, x):
        return maximum(acc, x)


class ReduceMinOp(ReductionOp, name="reduce_min"):
    """Minimum over axes.

    Example: %s = "nn.reduce_min"(%x) {axes = array<i64: 1>} : (tensor<2x8xf32>) -> tensor<2xf32>
    """

    element_types = NUMBERS

    identity = float("inf")

    def combine(self, acc, x):
        return minimum(acc, x)


class ReduceMeanOp(ReductionOp, name="reduce_mean"):
    """Arithmetic mean over axes.

    Example: %s = "nn.reduce_mean"(%x) {axes = array<i64: 0, 1>} : (tensor<2x8xf32>) -> tensor<f32>
    """

    def combine(self, acc, x):
        return acc + x

    def finish(self, total, count):
        return total / count


class CumsumOp(NN.Operation, name="cumsum"):
    """Inclusive prefix sum along `axis`: `result[..., i] = x[..., 0] + ... +
    x[..., i]` (NumPy's `cumsum`). Integers sum in their own type
    (wrapping); f16 and bf16 in f32, rounded once per element.

    Example: %y = "nn.cumsum"(%x) {axis = 1 : i64} : (tensor<2x8xi64>) -> tensor<2x8xi64>
    """

    x: Operand
    result: Result
    axis: IntAttr
    element_types = NUMBERS

    def infer_type(self, x):
        _normalize_axis(self.axis, x.rank)
        return x

    def reference(self, x):
        axis = self.axis % x.ndim
        if x.dtype.kind in "iu":
            return np.cumsum(x, axis=axis, dtype=x.dtype)
        return np.cumsum(_compute(x), axis=axis).astype(x.dtype)


class ArgmaxOp(NN.Operation, name="argmax"):
    """The index of the greatest element along `axis` (the first one of
    equal greatest elements, and the first NaN where there is one, as
    NumPy's `argmax`), as i64; `keepdims` keeps the axis as size 1.

    Example: %i = "nn.argmax"(%x) {axis = -1 : i64} : (tensor<2x8xf32>) -> tensor<2xi64>
    """

    x: Operand
    result: Result[TensorOf("i64")]
    axis: IntAttr
    keepdims: BoolAttr = False
    element_types = NUMBERS

    def infer_type(self, x):
        axis = _normalize_axis(self.axis, x.rank)
        if x.shape[axis] == 0:
            raise VerifyError(f"argmax along an empty axis of {x}")
        shape = [1 if d == axis else n for d, n in enumerate(x.shape)
                 if self.keepdims or d != axis]
        return TensorType(tuple(shape), "i64")

    def reference(self, x):
        return np.argmax(_compute(x), axis=self.axis % x.ndim,
                         keepdims=self.keepdims).astype(np.int64)


# ---------------------------------------------------------------------------
# Normalisations and attention (composite).


class SoftmaxOp(CompositeOp, name="softmax"):
    """Softmax along `axis`, computed stably (the max is subtracted first).

    Example: %y = "nn.softmax"(%x) {axis = -1 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
    """

    x: Operand
    result: Result
    axis: IntAttr = -1
    dynamic_dims = True

    def infer_type(self, x):
        _normalize_axis(self.axis, x.rank)
        return x

    def reference(self, x):
        z = _compute(x)
        z = z - np.max(z, axis=self.axis, keepdims=True)
        e = np.exp(z)
        return (e / np.sum(e, axis=self.axis, keepdims=True)).astype(x.dtype)

    def decompose(self, x):
        """`e = exp(x - max(x)); e * (1 / sum(e))` along the axis: one
        division per row, a product per element (within an ulp of
        `e / sum(e)`)."""
        dtype = _type_of(x).dtype
        shifted, axes = _shifted_by_max(_in_f32(x), self.axis)
        e = ExpOp.build(shifted)
        total = ReduceSumOp.build(e, axes=axes, keepdims=True)
        return _rounded(MulOp.build(e, DivOp.build(_scalar(1.0, "f32"), total)), dtype)


class LogSoftmaxOp(CompositeOp, name="log_softmax"):
    """Logarithm of the softmax along `axis`, computed stably.

    Example: %y = "nn.log_softmax"(%x) : (tensor<2x8xf32>) -> tensor<2x8xf32>
    """

    x: Operand
    result: Result
    axis: IntAttr = -1
    dynamic_dims = True

    def infer_type(self, x):
        _normalize_axis(self.axis, x.rank)
        return x

    def reference(self, x):
        z = _compute(x)
        z = z - np.max(z, axis=self.axis, keepdims=True)
        return (z - np.log(np.sum(np.exp(z), axis=self.axis, keepdims=True))).astype(x.dtype)

    def decompose(self, x):
        """`z = x - max(x); z - log(sum(exp(z)))` along the axis."""
        dtype = _type_of(x).dtype
        shifted, axes = _shifted_by_max(_in_f32(x), self.axis)
        total = ReduceSumOp.build(ExpOp.build(shifted), axes=axes, keepdims=True)
        return _rounded(SubOp.build(shifted, LogOp.build(total)), dtype)


def _shifted_by_max(x: ir.Value, axis: int) -> tuple[ir.Value, tuple[int, ...]]:
    """`x - max(x)` along `axis` (a stable softmax's first step), and the
    reduction axes."""
    axes = (axis % _type_of(x).rank,)
    return SubOp.build(x, ReduceMaxOp.build(x, axes=axes, keepdims=True)), axes


class NormalizationOp(CompositeOp):
    """Base of normalisations over the dims `axis .. rank-1`; the scale (and
    shift) operands are shaped like those dims."""

    axis: IntAttr = -1
    epsilon: FloatAttr = 1e-5
    dynamic_dims = True

    def normalized_dims(self, x: TensorType) -> tuple[int, ...]:
        axis = _normalize_axis(self.axis, x.rank)
        return tuple(range(axis, x.rank))

    def check_param(self, what: str, x: TensorType, param: TensorType):
        dims = self.normalized_dims(x)
        expected = tuple(x.shape[d] for d in dims)
        if not compatible_shapes(param.shape, expected):
            raise VerifyError(f"{what} must have shape [{_shape_text(expected)}] "
                              f"(the normalised dims), got {param}")

    def verify(self, x, *params):
        if self.epsilon < 0:
            raise VerifyError(f"'epsilon' must be >= 0, got {self.epsilon}")


class LayerNormOp(NormalizationOp, name="layer_norm"):
    """Layer normalisation: `(x - mean) / sqrt(var + epsilon) * gamma + beta`
    over the dims `axis .. rank-1`.

    Example: %y = "nn.layer_norm"(%x, %g, %b) {epsilon = 1.0e-05 : f32} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
    """

    x: Operand
    gamma: Operand
    beta: Operand
    result: Result

    def infer_type(self, x, gamma, beta):
        _same_dtype(x, gamma, beta)
        self.check_param("gamma", x, gamma)
        self.check_param("beta", x, beta)
        return x

    def reference(self, x, gamma, beta):
        dims = self.normalized_dims(TensorType(x.shape, "f32"))
        z = _compute(x)
        mean = np.mean(z, axis=dims, keepdims=True)
        var = np.mean((z - mean) ** 2, axis=dims, keepdims=True)
        y = (z - mean) / np.sqrt(var + np.float32(self.epsilon))
        return (y * _compute(gamma) + _compute(beta)).astype(x.dtype)

    def decompose(self, x, gamma, beta):
        """Two passes over each row, as the reference: the mean, then the
        mean of squared deviations (E[x^2] - E[x]^2 would cancel);
        `(x - mean) * rsqrt(var + epsilon) * gamma + beta`."""
        dtype = _type_of(x).dtype
        z = _in_f32(x)
        axes = self.normalized_dims(_type_of(x))
        deviation = SubOp.build(z, ReduceMeanOp.build(z, axes=axes, keepdims=True))
        var = ReduceMeanOp.build(MulOp.build(deviation, deviation), axes=axes, keepdims=True)
        inv_std = RsqrtOp.build(AddOp.build(var, _scalar(self.epsilon, "f32")))
        y = MulOp.build(MulOp.build(deviation, inv_std), _in_f32(gamma))
        return _rounded(AddOp.build(y, _in_f32(beta)), dtype)


class RmsNormOp(NormalizationOp, name="rms_norm"):
    """Root-mean-square normalisation: `x / sqrt(mean(x^2) + epsilon) * gamma`
    over the dims `axis .. rank-1`.

    Example: %y = "nn.rms_norm"(%x, %g) : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
    """

    x: Operand
    gamma: Operand
    result: Result

    def infer_type(self, x, gamma):
        _same_dtype(x, gamma)
        self.check_param("gamma", x, gamma)
        return x

    def reference(self, x, gamma):
        dims = self.normalized_dims(TensorType(x.shape, "f32"))
        z = _compute(x)
        ms = np.mean(z * z, axis=dims, keepdims=True)
        return (z / np.sqrt(ms + np.float32(self.epsilon)) * _compute(gamma)).astype(x.dtype)

    def decompose(self, x, gamma):
        """`x * rsqrt(mean(x^2) + epsilon) * gamma`."""
        dtype = _type_of(x).dtype
        z = _in_f32(x)
        axes = self.normalized_dims(_type_of(x))
        mean_square = ReduceMeanOp.build(MulOp.build(z, z), axes=axes, keepdims=True)
        inv_rms = RsqrtOp.build(AddOp.build(mean_square, _scalar(self.epsilon, "f32")))
        return _rounded(MulOp.build(MulOp.build(z, inv_rms), _in_f32(gamma)), dtype)


class AttentionOp(CompositeOp, name="attention"):
    """Scaled dot-product attention `softmax(q k^T * scale + mask) v` with
    `q [..., Sq, D]`, `k [..., Sk, D]`, `v [..., Sk, Dv]` and result
    `[..., Sq, Dv]`. `scale` defaults to `1/sqrt(D)`; the optional additive
    `mask` broadcasts to `[..., Sq, Sk]` (-inf hides a key: a padding
    mask); `causal` hides key `j > i` from query `i`. A query whose keys
    the mask hides all gives 0 (as ONNX's Attention defines it), not NaN.

    Example: %o = "nn.attention"(%q, %k, %v) {causal = true} : (tensor<2x16x64xf32>, tensor<2x16x64xf32>, tensor<2x16x64xf32>) -> tensor<2x16x64xf32>
    """

    q: Operand
    k: Operand
    v: Operand
    mask: Optional[Operand]
    result: Result
    causal: BoolAttr = False
    scale: FloatAttr = None

    def infer_type(self, q, k, v, mask):
        dtype = _same_dtype(*[t for t in (q, k, v, mask) if t is not None])
        for name, t in (("q", q), ("k", k), ("v", v)):
            if t.rank < 2:
                raise VerifyError(f"attention {name} must have rank >= 2, got {t}")
        if not q.rank == k.rank == v.rank:
            raise VerifyError(f"attention q, k and v ranks differ: {q.rank}, {k.rank}, {v.rank}")
        if not q.shape[:-2] == k.shape[:-2] == v.shape[:-2]:
            raise VerifyError(f"attention batch dims differ: q {list(q.shape[:-2])}, "
                              f"k {list(k.shape[:-2])}, v {list(v.shape[:-2])}")
        if q.shape[-1] != k.shape[-1]:
            raise VerifyError(f"attention head dims of q and k differ: {q.shape[-1]} vs {k.shape[-1]}")
        if q.shape[-1] == 0 and self.scale is None:
            raise VerifyError("attention with a head dim of 0 needs a scale (the default "
                              "1/sqrt(D) is undefined)")
        if k.shape[-2] != v.shape[-2]:
            raise VerifyError(f"attention key and value lengths differ: {k.shape[-2]} vs {v.shape[-2]}")
        scores = q.shape[:-1] + (k.shape[-2],)
        if mask is not None:
            try:
                if broadcast_shapes(mask.shape, scores) != scores:
                    raise VerifyError("")
            except VerifyError:
                raise VerifyError(f"attention mask {mask} does not broadcast to the scores "
                                  f"[{'x'.join(map(str, scores))}]") from None
        return TensorType(q.shape[:-1] + (v.shape[-1],), dtype)

    def reference(self, q, k, v, mask):
        scale = self.scale if self.scale is not None else 1.0 / math.sqrt(q.shape[-1])
        s = np.matmul(_compute(q), np.swapaxes(_compute(k), -1, -2)) * np.float32(scale)
        if mask is not None:
            s = s + _compute(mask)
        if self.causal:
            sq, sk = s.shape[-2:]
            s = np.where(np.triu(np.ones((sq, sk), bool), 1), -np.inf, s)
        # No keys, like keys all hidden, gives 0.
        peak = np.max(s, axis=-1, keepdims=True, initial=-np.inf)
        p = np.exp(s - np.where(np.isneginf(peak), 0, peak))
        total = np.sum(p, axis=-1, keepdims=True)
        return np.matmul(p / np.where(total == 0, 1, total), _compute(v)).astype(q.dtype)

    def decompose(self, q, k, v, mask):
        """Scores `q k^T * scale (+ mask)`, causal keys hidden with -inf (a
        constant i1 mask), a stable softmax's exponentials, their product
        with `v`, divided by the row sums afterwards (Sq x Dv divisions
        instead of Sq x Sk). With a mask, a row whose keys are all hidden
        is shifted by 0 rather than its maximum (-inf) and divided by 1
        rather than its sum (0): it gives 0."""
        dtype = _type_of(q).dtype
        q, k, v = _in_f32(q), _in_f32(k), _in_f32(v)
        rank = _type_of(k).rank
        depth = _type_of(q).shape[-1]
        scale = self.scale if self.scale is not None else 1.0 / math.sqrt(depth)
        perm = tuple(range(rank - 2)) + (rank - 1, rank - 2)
        scores = MulOp.build(MatmulOp.build(q, TransposeOp.build(k, perm=perm)),
                             _scalar(scale, "f32"))
        if mask is not None:
            scores = AddOp.build(scores, _in_f32(mask))
        if self.causal:
            queries, keys = _type_of(scores).shape[-2:]
            hidden = np.triu(np.ones((queries, keys), np.bool_), 1)
            scores = SelectOp.build(arith.constant(ir.RankedTensorType.get(
                [queries, keys], ir.IntegerType.get_signless(1)), ir.DenseElementsAttr.get(hidden)),
                _scalar(float("-inf"), "f32"), scores)
        axes = (_type_of(scores).rank - 1,)
        peak = ReduceMaxOp.build(scores, axes=axes, keepdims=True)
        if mask is not None:
            peak = _replaced(peak, float("-inf"), 0.0)
        weights = ExpOp.build(SubOp.build(scores, peak))
        total = ReduceSumOp.build(weights, axes=axes, keepdims=True)
        if mask is not None:
            total = _replaced(total, 0.0, 1.0)
        return _rounded(DivOp.build(MatmulOp.build(weights, v), total), dtype)


def _replaced(x: ir.Value, value: float, by: float) -> ir.Value:
    """`x` (f32) with its elements equal to `value` replaced by `by`."""
    return SelectOp.build(CompareOp.build(x, _scalar(value, "f32"), predicate="eq"),
                          _scalar(by, "f32"), x)


# ---------------------------------------------------------------------------
# Data movement.


class DataMovementOp(NN.Operation):
    """Base of ops that move or copy elements without arithmetic. One
    parallel loop per result dim; an operand's map is None where no affine
    map says which element a result element comes from (reshape, concat,
    pad)."""

    # Integer matmuls' i8 operands are moved too (reshaped, transposed).
    element_types = ANY_ELEMENT + MATMUL_INTEGERS
    fusion_kind = DATA_MOVEMENT

    def iteration_domain(self, *operand_types) -> IterationDomain:
        return IterationDomain.parallel(self.infer_type(*operand_types).shape)

    def indexing_maps(self, *operand_types) -> tuple[IndexingMap | None, ...]:
        domain = self.infer_type(*operand_types).shape
        return tuple(self.operand_map(t, domain) for t in _present(operand_types)) + (
            IndexingMap.identity(len(domain)),)

    def operand_map(self, operand: TensorType, domain: tuple[int, ...]) -> IndexingMap | None:
        """The map of an operand over the result's loops, or None."""
        return None


class TransposeOp(DataMovementOp, name="transpose"):
    """Permutes dims: result dim `i` is operand dim `perm[i]`.

    Example: %y = "nn.transpose"(%x) {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
    """

    x: Operand
    result: Result
    perm: I64ArrayAttr
    dynamic_dims = True

    def infer_type(self, x):
        if sorted(self.perm) != list(range(x.rank)):
            raise VerifyError(f"'perm' {list(self.perm)} is not a permutation of the "
                              f"{x.rank} dims of {x}")
        return x.with_shape([x.shape[p] for p in self.perm])

    def operand_map(self, x, domain):
        return IndexingMap.of_loops(len(domain), [list(self.perm).index(d)
                                                  for d in range(x.rank)])

    def reference(self, x):
        return np.transpose(x, self.perm)


class ReshapeOp(DataMovementOp, name="reshape"):
    """Reinterprets the elements (row-major) with the result type's shape.

    Example: %y = "nn.reshape"(%x) : (tensor<2x6xf32>) -> tensor<3x4xf32>
    """

    x: Operand
    result: Result
    explicit_result_type = True
    dynamic_dims = True

    def infer_type(self, x):
        target = self.result_type
        if target.dtype != x.dtype:
            raise VerifyError(f"reshape changes the element type: {x.dtype} to {target.dtype}")
        return target.with_shape(self.target_shape(x))

    def kept_dims(self, x: TensorType) -> int:
        """How many leading '?' dims the result keeps from the operand
        (`?x768` to `?x12x64` keeps dim 0, `?x?x768` to `?x768` none: its
        '?' is their product), by the types in the IR: the longest common
        prefix of '?' dims after which the result has at most one '?' dim
        and the operand none unless the result has one."""
        source = self.operand_types[0].shape if self.operation is not None else x.shape
        target = self.result_type.shape
        kept = 0
        while (kept < min(len(source), len(target)) and source[kept] is None
               and target[kept] is None):
            kept += 1
        while kept and None in source[kept:] and None not in target[kept:]:
            kept -= 1
        return kept

    def target_shape(self, x: TensorType) -> tuple[int | None, ...]:
        """The result shape for an operand of type `x`: the result type's,
        its '?' dims resolved where `x`'s sizes are known (the sizes of a
        call). Raises VerifyError where the element counts differ."""
        target = list(self.result_type.shape)
        kept = self.kept_dims(x)
        target[:kept] = x.shape[:kept]
        rest = [d for d in range(kept, len(target)) if target[d] is None]
        if len(rest) > 1:
            raise VerifyError(f"reshape of {x} to {self.result_type}: the result may have "
                              "one '?' dim beyond the leading ones it keeps from the operand")
        source = x.shape[kept:]
        if None in source:
            return tuple(target)
        count = math.prod(source)
        known = math.prod(d for d in target[kept:] if d is not None)
        if rest:
            if known == 0 or count % known:
                raise VerifyError(f"reshape of {x} to {self.result_type}: {count} elements "
                                  f"do not split into rows of {known}")
            runtime = any(isinstance(d, RuntimeDim) for d in source)
            target[rest[0]] = RuntimeDim(count // known) if runtime else count // known
        elif count != known:
            per = " per leading '?' dim" if kept else ""
            raise VerifyError(f"reshape changes the element count: {x} has {count}{per}, "
                              f"{self.result_type} has {known}")
        return tuple(target)

    def reference(self, x):
        return np.reshape(x, self.target_shape(TensorType(
            [RuntimeDim(d) for d in x.shape], "f32")))


class BroadcastToOp(DataMovementOp, name="broadcast_to"):
    """Broadcasts (NumPy rules) to the result type's shape.

    Example: %y = "nn.broadcast_to"(%x) : (tensor<1x4xf32>) -> tensor<3x4xf32>
    """

    x: Operand
    result: Result
    explicit_result_type = True

    def infer_type(self, x):
        target = self.result_type
        if target.dtype != x.dtype:
            raise VerifyError(f"broadcast_to changes the element type: {x.dtype} to {target.dtype}")
        try:
            ok = broadcast_shapes(x.shape, target.shape) == target.shape
        except VerifyError:
            ok = False
        if not ok:
            raise VerifyError(f"cannot broadcast {x} to {target}")
        return target

    def operand_map(self, x, domain):
        return IndexingMap.broadcast(x.shape, domain)

    def reference(self, x):
        return np.broadcast_to(x, self.result_type.shape).copy()


class ConcatOp(DataMovementOp, name="concat"):
    """Joins tensors along `axis`; the other dims must agree.

    Example: %y = "nn.concat"(%a, %b) {axis = 0 : i64} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<5x4xf32>
    """

    inputs: Variadic[Operand]
    result: Result
    axis: IntAttr

    def infer_type(self, inputs):
        dtype = _same_dtype(*inputs)
        rank = inputs[0].rank
        if any(t.rank != rank for t in inputs):
            raise VerifyError("concat operands have different ranks: "
                              + ", ".join(str(t.rank) for t in inputs))
        axis = _normalize_axis(self.axis, rank)
        for i, t in enumerate(inputs[1:], 1):
            for d in range(rank):
                if d != axis and t.shape[d] != inputs[0].shape[d]:
                    raise VerifyError(f"concat operand #{i} differs in dim {d}: "
                                      f"{t.shape[d]} vs {inputs[0].shape[d]}")
        shape = list(inputs[0].shape)
        shape[axis] = sum(t.shape[axis] for t in inputs)
        return TensorType(tuple(shape), dtype)

    def reference(self, inputs):
        return np.concatenate(inputs, axis=self.axis)


class SliceOp(DataMovementOp, name="slice"):
    """Strided slice `x[starts:limits:strides]` per dim (limits exclusive).

    Example: %y = "nn.slice"(%x) {starts = array<i64: 0, 1>, limits = array<i64: 2, 5>, strides = array<i64: 1, 2>} : (tensor<2x8xf32>) -> tensor<2x2xf32>
    """

    x: Operand
    result: Result
    starts: I64ArrayAttr
    limits: I64ArrayAttr
    strides: I64ArrayAttr = None

    def step(self, rank: int) -> tuple[int, ...]:
        return tuple(self.strides) if self.strides is not None else (1,) * rank

    def infer_type(self, x):
        strides = self.step(x.rank)
        for name, values in (("starts", self.starts), ("limits", self.limits),
                             ("strides", strides)):
            if len(values) != x.rank:
                raise VerifyError(f"'{name}' must have {x.rank} elements (the rank), "
                                  f"got {len(values)}")
        shape = []
        for d, (start, limit, stride) in enumerate(zip(self.starts, self.limits, strides)):
            if stride < 1:
                raise VerifyError(f"slice stride in dim {d} must be >= 1, got {stride}")
            if not 0 <= start <= limit <= x.shape[d]:
                raise VerifyError(f"slice bounds in dim {d} must satisfy 0 <= start <= limit "
                                  f"<= {x.shape[d]}, got start {start}, limit {limit}")
            shape.append(-(-(limit - start) // stride))
        return x.with_shape(shape)

    def operand_map(self, x, domain):
        return IndexingMap(len(domain), tuple(
            _sum(_loop(d, stride), start)
            for d, (start, stride) in enumerate(zip(self.starts, self.step(x.rank)))))

    def reference(self, x):
        strides = self.step(x.ndim)
        return x[tuple(slice(s, l, t) for s, l, t in zip(self.starts, self.limits, strides))].copy()


class PadOp(DataMovementOp, name="pad"):
    """Pads each dim with `low` elements before and `high` after, filled
    with `value` (for i8 and ui8, quantised values and their zero points,
    an integer in the type's range).

    Example: %y = "nn.pad"(%x) {low = array<i64: 0, 1>, high = array<i64: 0, 2>, value = 0.0 : f32} : (tensor<2x3xf32>) -> tensor<2x6xf32>
    """

    x: Operand
    result: Result
    low: I64ArrayAttr
    high: I64ArrayAttr
    value: FloatAttr = 0.0
    element_types = FLOATS + QUANTIZED

    def infer_type(self, x):
        if x.dtype in QUANTIZED:
            low, high = quantized_range(x.dtype)
            if self.value != int(self.value) or not low <= self.value <= high:
                raise VerifyError(f"pad value {self.value} is not a {x.dtype} value "
                                  f"(an integer in [{low}, {high}])")
        _check_array("low", self.low, x.rank, 0)
        _check_array("high", self.high, x.rank, 0)
        return x.with_shape([d + lo + hi for d, lo, hi in zip(x.shape, self.low, self.high)])

    def reference(self, x):
        if x.ndim == 0:     # nothing to pad (np.pad refuses an empty pad width)
            return x.copy()
        return np.pad(x, list(zip(self.low, self.high)), constant_values=self.value)


class GatherOp(DataMovementOp, name="gather"):
    """Takes the slices of `x` along `axis` at `indices` (NumPy's `take`):
    the result has the shape `x.shape[:axis] + indices.shape +
    x.shape[axis+1:]`. An embedding lookup is a gather of the rows of its
    table (axis 0). An index outside `[0, x.shape[axis])` is clamped into
    it (as XLA's gather does): -1 reads the first slice, not the last;
    importers wrap negative indices where their framework defines them.

    Example: %y = "nn.gather"(%table, %ids) {axis = 0 : i64} : (tensor<1000x64xf32>, tensor<1x8xi64>) -> tensor<1x8x64xf32>
    """

    x: Operand
    indices: Operand[TensorOf(*INTEGERS)]
    result: Result
    axis: IntAttr = 0

    def infer_type(self, x, indices):
        axis = _normalize_axis(self.axis, x.rank)
        if x.shape[axis] == 0 and math.prod(indices.shape):
            raise VerifyError(f"gather from an empty axis of {x}")
        return x.with_shape(x.shape[:axis] + indices.shape + x.shape[axis + 1:])

    def indexing_maps(self, x, indices) -> tuple[IndexingMap | None, ...]:
        """`x` is read where the indices say (no affine map); `indices` at
        the loops that replace the axis."""
        result = self.infer_type(x, indices)
        axis = self.axis % x.rank
        return (None, IndexingMap.of_loops(result.rank, range(axis, axis + indices.rank)),
                IndexingMap.identity(result.rank))

    def reference(self, x, indices):
        axis = self.axis % x.ndim
        clamped = np.clip(indices, 0, max(x.shape[axis] - 1, 0))
        return np.take(x, clamped, axis=axis)


class IotaOp(DataMovementOp, name="iota"):
    """The index along `axis` at every element of the result type
    (`arange` along one dim, broadcast along the others).

    Example: %i = "nn.iota"() {axis = 0 : i64} : () -> tensor<8xi64>
    """

    result: Result
    axis: IntAttr = 0
    element_types = NUMBERS
    explicit_result_type = True

    def infer_type(self):
        if self.result_type.dtype not in self.element_types:
            raise VerifyError(f"cannot make indices of element type {self.result_type.dtype}")
        _normalize_axis(self.axis, self.result_type.rank)
        return self.result_type

    def reference(self):
        shape = self.result_type.shape
        axis = self.axis % len(shape)
        index = np.arange(shape[axis]).reshape([-1 if d == axis else 1
                                                for d in range(len(shape))])
        return np.broadcast_to(index, shape).astype(numpy_dtype(self.result_type.dtype))


# ---------------------------------------------------------------------------
# Fusion groups.


class FusedOp(NN.Operation, name="fused"):
    """A fusion group: the private function `body`, which holds the group's
    nn ops, applied to `inputs`; the results are the function's results.
    `kind` says what the group is built around: `elementwise` ops only, a
    `reduction` (with its producers and the consumers of its rows), a
    `contraction` or a `convolution` (with elementwise epilogues). Groups
    are formed by `nn-fuse`.

    Example: %y = "nn.fused"(%x, %b) {kind = "elementwise", body = @fusion_0} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    """

    inputs: Variadic[Operand]
    outputs: Variadic[Result]
    kind: EnumAttr(*GROUP_KINDS)
    body: SymbolRefAttr
    element_types = ELEMENT_TYPES
    dynamic_dims = True

    def verify(self, inputs):
        """Where the op sits in a module, `body` must be a function of it
        that takes the inputs' types and returns the results' types."""
        function = self.body_function()
        if function is None:
            return
        function_type = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)
        expected = [TensorType.from_mlir(t, dynamic=True) for t in function_type.inputs]
        if list(inputs) != expected:
            raise VerifyError(f"inputs ({', '.join(map(str, inputs))}) do not match the "
                              f"arguments of @{self.body} ({', '.join(map(str, expected))})")
        results = [TensorType.from_mlir(t, dynamic=True) for t in function_type.results]
        if list(self.result_types) != results:
            raise VerifyError(f"results ({', '.join(map(str, self.result_types))}) do not match "
                              f"the results of @{self.body} ({', '.join(map(str, results))})")

    def body_function(self) -> ir.Operation | None:
        """The `func.func` named by `body` in the enclosing module; None for
        a detached view or an op outside a module. Raises VerifyError when
        the module has no such function."""
        if self.operation is None:
            return None
        module = self.operation.parent
        while module is not None and module.name != "builtin.module":
            module = module.parent
        if module is None:
            return None
        try:
            function = ir.SymbolTable(module.operation)[self.body]
        except KeyError:
            raise VerifyError(f"calls @{self.body}, which the module does not define") from None
        if function.operation.name != "func.func":
            raise VerifyError(f"calls @{self.body}, which is a '{function.operation.name}', "
                              "not a func.func")
        return function.operation

    def callee(self) -> str:
        """The function the reference interpreter runs for this op."""
        return self.body

    def reference(self, inputs):
        raise NotImplementedError(f"runs its body @{self.body}: evaluate the module with "
                                  "lamina.reference, which calls it")
