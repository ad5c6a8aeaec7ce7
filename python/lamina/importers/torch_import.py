"""PyTorch models to Lamina modules of nn ops, through `torch.export`.

    module = lamina.from_torch(model, (x,))                        # weights as arguments
    f = lamina.compile(module)
    y = f(*weights(module, model), x.numpy())

    module = lamina.from_torch(model, (x,), params="constants")    # weights in the module
    y = lamina.compile(module)(x.numpy())

The model is exported with `torch.export`, and the exported program is
functionalised with `run_decompositions({})`: in-place ops become their
functional forms, `batch_norm` in eval mode becomes
`_native_batch_norm_legit_no_training`, `flatten` a `view`; composite ops
that the nn dialect holds whole (`linear`, `conv2d`, `layer_norm`,
`scaled_dot_product_attention`, `gelu`, ...) are kept, so that nothing is
decomposed further than nn needs. An op with no converter is then
decomposed by PyTorch's core ATen decompositions where every op of its
decomposition has one (mish, baddbmm, addcmul, normalize). Each aten op
becomes nn ops located at the line of the model's Python source that
called it (the innermost frame of the node's stack trace outside torch
itself).

With `params="arguments"` the function takes the parameters and buffers the
graph uses first (each argument carries its name in `lamina.parameter`,
`weights` lists their arrays), then the model's inputs; with
`params="constants"` they are `arith.constant`s and the function takes the
inputs only.

An op the importer cannot express in nn ops (an aten op with no mapping, or
one used in a way nn cannot compute, such as a transposed convolution) does
not stop the import: every node is visited, the unsupported ones stand in
with a value of their result type, and at the end one UnsupportedOpsError
lists each of them with its source line.
"""

from __future__ import annotations

import math
import operator
import os
import re
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
import torch
from mlir import ir
from mlir.dialects import func, tensor

from lamina.context import make_context, verify
from lamina.dialects.nn import quantized_range
from lamina.importers import indexing
from lamina.diagnostics import CompileError, Diagnostic, DiagnosticCollector
from lamina.nn import _constant, builder
from lamina.types import TensorType

PARAMS = ("arguments", "constants")


_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')

_ELEMENT_TYPES = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16",
                  torch.bool: "i1", torch.int8: "i8", torch.uint8: "ui8", torch.int32: "i32",
                  torch.int64: "i64"}


class UnsupportedOpsError(CompileError):
    """The model uses ops that Lamina cannot express in nn ops; `ops` holds
    `(op name, file, line)` for each, and the message lists them all."""

    def __init__(self, diagnostics: list[Diagnostic], ops: list[tuple[str, str | None, int]]):
        self.ops = ops
        super().__init__(diagnostics, "the model uses unsupported ops")


class Unsupported(Exception):
    """Raised by a converter: this use of the op has no nn form (the
    message says why)."""


def element_type(dtype: torch.dtype) -> str:
    """The nn element type of a torch dtype; raises Unsupported."""
    try:
        return _ELEMENT_TYPES[dtype]
    except KeyError:
        raise Unsupported(f"element type {str(dtype).removeprefix('torch.')} (nn ops take "
                          "float32, float16, bfloat16, int8, uint8, int32, int64 and bool)") \
            from None


def source_line(node: torch.fx.Node) -> tuple[str, int] | None:
    """The file and line of the model's Python source that created `node`:
    the innermost frame of its stack trace outside torch (or the innermost
    frame when all are inside torch), or None without a trace."""
    frames = [(m["file"], int(m["line"])) for m in _FRAME.finditer(
        node.meta.get("stack_trace") or "")]
    outside = [f for f in frames if not os.path.abspath(f[0]).startswith(_TORCH_DIR)]
    return (outside or frames or [None])[-1]


def op_name(target) -> str:
    """`aten.linear.default` for an aten op overload, `getitem` for
    `operator.getitem`, the qualified name otherwise."""
    if target is operator.getitem:
        return "getitem"
    if isinstance(target, torch._ops.OpOverload):
        return str(target)
    return getattr(target, "__qualname__", None) or str(target)


# ---------------------------------------------------------------------------
# Converters: one function per aten op (or family), registered by name.

_CONVERTERS: dict[str, Callable] = {}
# Argument positions a converter takes as `Weight` when the parameter is a
# constant (so that it can fold a transpose into the array).
_RAW_WEIGHTS: dict[str, tuple[int, ...]] = {}


def converts(*names: str, weights: tuple[int, ...] = ()):
    """Registers a converter for the aten ops `names` (`aten.op.overload`)."""
    def register(converter):
        for name in names:
            _CONVERTERS[name] = converter
            if weights:
                _RAW_WEIGHTS[name] = weights
        return converter
    return register


def supported_ops() -> list[str]:
    """The names of the aten ops the importer maps."""
    return sorted(_CONVERTERS)


@dataclass
class Weight:
    """A parameter or buffer that becomes a constant when first used."""

    name: str
    array: np.ndarray
    dtype: str
    value: ir.Value | None = None


class Emitter:
    """What a converter builds with: the node, its location and result
    type, and nn ops at that location."""

    def __init__(self, importer: "_Importer", node: torch.fx.Node, location: ir.Location):
        self.importer = importer
        self.node = node
        self.location = location

    def __getattr__(self, name: str) -> Callable[..., ir.Value]:
        # `e.matmul(a, b)`: the nn builder of that op, at the node's line.
        # (`cast`, `reshape` and `constant` below skip identities.)
        build = builder(name)
        return lambda *args, **kwargs: build(*args, _location=self.location, **kwargs)

    @property
    def result(self) -> torch.Tensor:
        """The node's example result (a fake tensor: shape and dtype)."""
        return self.node.meta["val"]

    @property
    def shape(self) -> tuple[int, ...]:
        return static_shape(self.result)

    @property
    def dtype(self) -> str:
        return element_type(self.result.dtype)

    def constant(self, value, dtype: str | None = None) -> ir.Value:
        return _constant(np.asarray(value), dtype or self.dtype, self.location)

    def tensor(self, value) -> ir.Value:
        return self.importer.materialize(value)

    def cast(self, x: ir.Value, dtype: str) -> ir.Value:
        return x if type_of(x).dtype == dtype else self.__getattr__("cast")(x, dtype)

    def to_result_type(self, *values):
        """Tensors cast to the result's element type; numbers as they are."""
        return [self.cast(v, self.dtype) if isinstance(v, ir.Value) else v for v in values]

    def reshape(self, x: ir.Value, shape: Sequence[int]) -> ir.Value:
        return x if type_of(x).shape == tuple(shape) else self.__getattr__("reshape")(x, shape)

    def op(self, name: str, *operands, **attrs) -> ir.Value:
        """The nn op `name` (the builder protocol of `lamina.importers.indexing`)."""
        return self.__getattr__(name)(*operands, **attrs)

    def scalar(self, value, like: ir.Value) -> ir.Value:
        """A rank-0 constant of `like`'s element type."""
        return self.constant(value, type_of(like).dtype)


def type_of(value: ir.Value) -> TensorType:
    return TensorType.from_mlir(value.type)


def static_shape(fake: torch.Tensor) -> tuple[int, ...]:
    try:
        return tuple(int(d) for d in fake.shape)
    except (TypeError, ValueError):
        raise Unsupported("dynamic shapes are not supported (export with static shapes)") \
            from None


def _ints(value, count: int | None = None) -> tuple[int, ...]:
    """An int or a list of ints as a tuple (an int repeated `count` times)."""
    if isinstance(value, (list, tuple)):
        values = tuple(int(v) for v in value)
        return values * count if count and len(values) == 1 else values
    return (int(value),) * (count or 1)


def _axis(axis: int, rank: int) -> int:
    return axis % rank if rank else 0


def _axes(dims, rank: int) -> tuple[int, ...]:
    """Reduction dims (None or [] is all of them), non-negative and sorted."""
    if dims is None or (isinstance(dims, (list, tuple)) and not dims):
        return tuple(range(rank))
    return tuple(sorted({_axis(d, rank) for d in _ints(dims)}))


# Elementwise.

_UNARY = {"relu": "relu", "sigmoid": "sigmoid", "tanh": "tanh", "exp": "exp", "log": "log",
          "sqrt": "sqrt", "rsqrt": "rsqrt", "neg": "neg", "abs": "abs", "erf": "erf",
          "silu": "silu", "sin": "sin", "cos": "cos"}

for _name, _nn_name in _UNARY.items():
    def _unary(e, x, _nn_name=_nn_name):
        return getattr(e, _nn_name)(e.cast(x, e.dtype))
    converts(f"aten.{_name}.default")(_unary)


@converts("aten.gelu.default")
def _gelu(e, x, approximate="none"):
    return e.gelu(x, approximate=approximate)


@converts("aten.reciprocal.default")
def _reciprocal(e, x):
    return e.div(e.constant(1.0), x)


def _clamped(e, x, low, high):
    if low is not None:
        x = e.maximum(x, low)
    if high is not None:
        x = e.minimum(x, high)
    return x


@converts("aten.hardtanh.default")
def _hardtanh(e, x, min_val=-1.0, max_val=1.0):
    return _clamped(e, x, float(min_val), float(max_val))


@converts("aten.relu6.default")
def _relu6(e, x):
    return _clamped(e, x, 0.0, 6.0)


@converts("aten.clamp.default", "aten.clamp.Tensor")
def _clamp(e, x, min=None, max=None):
    x, min, max = e.to_result_type(x, min, max)
    return _clamped(e, x, min, max)


@converts("aten.clamp_min.default")
def _clamp_min(e, x, min):
    return _clamped(e, x, min, None)


@converts("aten.clamp_max.default")
def _clamp_max(e, x, max):
    return _clamped(e, x, None, max)


@converts("aten.hardsigmoid.default")
def _hardsigmoid(e, x):
    return _clamped(e, e.add(e.mul(x, 1.0 / 6.0), 0.5), 0.0, 1.0)


@converts("aten.hardswish.default")
def _hardswish(e, x):
    return e.mul(x, _hardsigmoid(e, x))


@converts("aten.leaky_relu.default")
def _leaky_relu(e, x, negative_slope=0.01):
    return e.select(e.compare(x, 0.0, predicate="gt"), x, e.mul(x, float(negative_slope)))


@converts("aten.elu.default")
def _elu(e, x, alpha=1.0, scale=1.0, input_scale=1.0):
    negative = e.mul(e.sub(e.exp(e.mul(x, float(input_scale))), 1.0), float(alpha * scale))
    return e.select(e.compare(x, 0.0, predicate="gt"), e.mul(x, float(scale)), negative)


@converts("aten.softplus.default")
def _softplus(e, x, beta=1.0, threshold=20.0):
    scaled = e.mul(x, float(beta))
    soft = e.div(e.log(e.add(e.exp(scaled), 1.0)), float(beta))
    return e.select(e.compare(scaled, float(threshold), predicate="gt"), x, soft)


@converts("aten.pow.Tensor_Scalar", "aten.pow.Tensor_Tensor", "aten.pow.Scalar")
def _pow(e, x, exponent):
    x, exponent = e.to_result_type(x, exponent)
    if exponent == 2:
        return e.mul(x, x)
    if exponent == 1:
        return x
    return e.pow(x, exponent)


def _binary(nn_name: str, alpha_operand: int | None = None):
    def convert(e, lhs, rhs, alpha=1):
        lhs, rhs = e.to_result_type(lhs, rhs)
        if alpha != 1:
            if alpha_operand == 1:
                rhs = e.mul(rhs, alpha) if isinstance(rhs, ir.Value) else rhs * alpha
            else:
                lhs = e.mul(lhs, alpha) if isinstance(lhs, ir.Value) else lhs * alpha
        if not isinstance(lhs, ir.Value) and not isinstance(rhs, ir.Value):
            return e.constant(getattr(operator, nn_name if nn_name != "div" else "truediv")(
                lhs, rhs))
        if not isinstance(lhs, ir.Value):
            lhs = e.constant(lhs)
        return getattr(e, nn_name)(lhs, rhs)
    return convert


converts("aten.add.Tensor", "aten.add.Scalar")(_binary("add", 1))
converts("aten.sub.Tensor", "aten.sub.Scalar")(_binary("sub", 1))
converts("aten.rsub.Scalar", "aten.rsub.Tensor")(
    lambda e, x, other, alpha=1: _binary("sub", 1)(e, other, x, alpha))
converts("aten.mul.Tensor", "aten.mul.Scalar")(_binary("mul"))
converts("aten.div.Tensor", "aten.div.Scalar")(_binary("div"))
converts("aten.maximum.default")(_binary("maximum"))
converts("aten.minimum.default")(_binary("minimum"))


@converts("aten.div.Tensor_mode")
def _div_mode(e, lhs, rhs, rounding_mode=None):
    if rounding_mode is not None:
        raise Unsupported(f"division with rounding_mode='{rounding_mode}' is not supported")
    return _binary("div")(e, lhs, rhs)


def _compare(predicate: str):
    def convert(e, lhs, rhs):
        operands = [a.meta["val"] if isinstance(a, torch.fx.Node) else a
                    for a in e.node.args[:2]]
        dtype = element_type(torch.result_type(*operands))
        lhs, rhs = [e.cast(v, dtype) if isinstance(v, ir.Value) else v for v in (lhs, rhs)]
        if not isinstance(lhs, ir.Value):
            lhs = e.constant(lhs, dtype)
        return e.compare(lhs, rhs, predicate=predicate)
    return convert


for _predicate in ("eq", "ne", "lt", "le", "gt", "ge"):
    converts(f"aten.{_predicate}.Tensor", f"aten.{_predicate}.Scalar")(_compare(_predicate))


@converts("aten.where.self", "aten.where.ScalarSelf", "aten.where.ScalarOther",
          "aten.where.Scalar")
def _where(e, cond, lhs, rhs):
    lhs, rhs = [v if isinstance(v, ir.Value) else e.constant(v)
                for v in e.to_result_type(lhs, rhs)]
    return e.select(cond, lhs, rhs)


@converts("aten.masked_fill.Scalar", "aten.masked_fill.Tensor")
def _masked_fill(e, x, mask, value):
    value, = e.to_result_type(value)
    return e.select(mask, value if isinstance(value, ir.Value) else e.constant(value), x)


@converts("aten.logical_not.default")
def _logical_not(e, x):
    return e.select(e.cast(x, "i1"), e.constant(False, "i1"), e.constant(True, "i1"))


def _booleans(e, *values) -> list[ir.Value]:
    """Boolean operands of a logical op (bitwise ops on bools are logical);
    bitwise ops on integers have no nn form."""
    found = []
    for value in values:
        if not isinstance(value, ir.Value):
            value = e.constant(bool(value), "i1")
        elif type_of(value).dtype != "i1" and e.node.target._overloadpacket.__name__.startswith(
                ("bitwise", "__")):
            raise Unsupported(f"bitwise operations on {type_of(value).dtype} are not supported "
                              "(only on bool)")
        found.append(e.cast(value, "i1"))
    return found


@converts("aten.logical_and.default", "aten.bitwise_and.Tensor", "aten.__and__.Tensor",
          "aten.bitwise_and.Scalar", "aten.__and__.Scalar")
def _logical_and(e, lhs, rhs):
    lhs, rhs = _booleans(e, lhs, rhs)
    return e.select(lhs, rhs, e.constant(False, "i1"))


@converts("aten.logical_or.default", "aten.bitwise_or.Tensor", "aten.__or__.Tensor",
          "aten.bitwise_or.Scalar", "aten.__or__.Scalar")
def _logical_or(e, lhs, rhs):
    lhs, rhs = _booleans(e, lhs, rhs)
    return e.select(lhs, e.constant(True, "i1"), rhs)


@converts("aten.bitwise_not.default")
def _bitwise_not(e, x):
    x, = _booleans(e, x)
    return _logical_not(e, x)


# Casts and copies.

@converts("aten.clone.default", "aten.contiguous.default", "aten.alias.default",
          "aten.detach.default", "aten.lift_fresh_copy.default", "aten._to_copy.default",
          "aten.to.dtype", "aten.to.dtype_layout", "aten.to.device", "aten.type_as.default")
def _copy(e, x, *args, **kwargs):
    return e.cast(x, e.dtype)


@converts("aten.dropout.default", "aten.feature_dropout.default",
          "aten.native_dropout.default")
def _dropout(e, x, p=0.5, train=False):
    if train and p:
        raise Unsupported("dropout in training mode is not supported (call model.eval())")
    if e.node.target == torch.ops.aten.native_dropout.default:
        return (x, None)
    return x


@converts("aten._assert_tensor_metadata.default")
def _assert_metadata(e, *args, **kwargs):
    return None


@converts("aten.full.default", "aten.zeros.default", "aten.ones.default",
          "aten.full_like.default", "aten.zeros_like.default", "aten.ones_like.default",
          "aten.scalar_tensor.default", "aten.new_zeros.default", "aten.new_ones.default",
          "aten.new_full.default")
def _filled(e, *args, **kwargs):
    name = e.node.target._overloadpacket.__name__
    if "zeros" in name:
        value = 0
    elif "ones" in name:
        value = 1
    elif name == "scalar_tensor":
        value = args[0]
    else:
        value = args[-1] if name in ("full", "full_like", "new_full") else kwargs["fill_value"]
    return e.constant(np.full(e.shape, value))


# Matrix products.

def _matmul(e, lhs, rhs):
    """`torch.matmul` semantics: a 1-D operand is a row (lhs) or a column
    (rhs) whose dim the result drops."""
    lhs, rhs = e.to_result_type(lhs, rhs)
    if type_of(lhs).rank == 1:
        lhs = e.reshape(lhs, (1,) + type_of(lhs).shape)
    if type_of(rhs).rank == 1:
        rhs = e.reshape(rhs, type_of(rhs).shape + (1,))
    return e.reshape(e.matmul(lhs, rhs), e.shape)


converts("aten.mm.default", "aten.bmm.default", "aten.matmul.default")(_matmul)


def _transposed(e, weight) -> ir.Value:
    if isinstance(weight, Weight):
        return e.importer.materialize(Weight(weight.name, weight.array.T.copy(), weight.dtype))
    weight = e.tensor(weight)
    rank = type_of(weight).rank
    return weight if rank < 2 else e.transpose(weight, perm=(1, 0))


@converts("aten.linear.default", weights=(1,))
def _linear(e, x, weight, bias=None):
    """`x @ weight^T + bias`; a constant weight is transposed once, here."""
    y = _matmul(e, x, _transposed(e, weight))
    return y if bias is None else e.add(y, bias)


@converts("aten.t.default", weights=(0,))
def _t(e, x):
    return _transposed(e, x)


@converts("aten.addmm.default")
def _addmm(e, bias, lhs, rhs, beta=1, alpha=1):
    product = e.matmul(lhs, rhs)
    if alpha != 1:
        product = e.mul(product, float(alpha))
    if beta == 0:
        return product
    return e.add(product, bias if beta == 1 else e.mul(bias, float(beta)))


# Quantisation: the ops PyTorch 2 export quantisation (`prepare_pt2e` /
# `convert_pt2e`, e.g. with X86InductorQuantizer) writes into the graph,
# `torch.ops.quantized_decomposed.*`, as nn.quantize and nn.dequantize.
# torch quantises as `clamp(round(x * (1 / scale)) + zero_point, quant_min,
# quant_max)`: the product by the reciprocal, rounded to f32, is what
# torch computes (not the quotient nn.quantize takes), so it is an nn.mul
# and the nn.quantize is by scale 1; nn-fuse-qdq takes that form too.


def _quantized_dtype(dtype) -> str:
    if dtype not in (torch.int8, torch.uint8):
        raise Unsupported(f"quantisation to {str(dtype).removeprefix('torch.')} (nn quantises "
                          "to int8 and uint8)")
    return element_type(dtype)


def _quantization_parameter(e, value, dtype: str):
    """A scale (f32) or zero point (`dtype`): a number, a constant array or a
    value of any numeric type."""
    if isinstance(value, Weight):
        value = value.array
    if isinstance(value, ir.Value):
        return e.cast(value, dtype)
    array = np.asarray(value)
    if dtype != "f32":
        array = array.astype(np.int64)
    return e.constant(array, dtype)


def _clamped_to_quant_range(e, scaled, zero_point, quant_min, quant_max, dtype: str,
                            shape=()):
    """`scaled` (before rounding) clamped to [quant_min - zero_point,
    quant_max - zero_point] where that range is narrower than the type's
    (the type's saturation does the rest): bounds that are integers give
    the same result before rounding as after it. `zero_point` is the f32
    value broadcast against `scaled` (`shape`: its shape as such)."""
    low, high = quantized_range(dtype)
    if int(quant_max) < high:
        bound = e.sub(e.constant(np.float32(quant_max), "f32"), zero_point)
        scaled = e.minimum(scaled, e.reshape(bound, shape) if shape else bound)
    if int(quant_min) > low:
        bound = e.sub(e.constant(np.float32(quant_min), "f32"), zero_point)
        scaled = e.maximum(scaled, e.reshape(bound, shape) if shape else bound)
    return scaled


@converts("quantized_decomposed.quantize_per_tensor.default")
def _quantize_per_tensor(e, x, scale, zero_point, quant_min, quant_max, dtype):
    qtype = _quantized_dtype(dtype)
    x = e.cast(x, "f32")
    scaled = e.mul(x, e.constant(np.float32(1.0 / float(scale)), "f32"))
    scaled = _clamped_to_quant_range(e, scaled, _quantization_parameter(e, zero_point, "f32"),
                                     quant_min, quant_max, qtype)
    return e.quantize(scaled, e.constant(np.float32(1.0), "f32"),
                      _quantization_parameter(e, zero_point, qtype))


@converts("quantized_decomposed.dequantize_per_tensor.default")
def _dequantize_per_tensor(e, x, scale, zero_point, quant_min, quant_max, dtype,
                           out_dtype=None):
    qtype = _quantized_dtype(dtype)
    y = e.dequantize(e.cast(x, qtype), _quantization_parameter(e, np.float32(scale), "f32"),
                     _quantization_parameter(e, zero_point, qtype))
    return e.cast(y, e.dtype)


@converts("quantized_decomposed.quantize_per_channel.default", weights=(1, 2))
def _quantize_per_channel(e, x, scales, zero_points, axis, quant_min, quant_max, dtype):
    qtype = _quantized_dtype(dtype)
    rank = type_of(x).rank
    axis = _axis(axis, rank)
    channels = type_of(x).shape[axis]
    if isinstance(scales, Weight):
        reciprocal = e.constant((1.0 / scales.array.astype(np.float32)).astype(np.float32), "f32")
    else:
        reciprocal = e.div(e.constant(np.float32(1.0), "f32"), e.cast(scales, "f32"))
    shape = [1] * rank
    shape[axis] = channels
    scaled = e.mul(e.cast(x, "f32"), e.reshape(reciprocal, shape))
    scaled = _clamped_to_quant_range(e, scaled, _quantization_parameter(e, zero_points, "f32"),
                                     quant_min, quant_max, qtype, shape)
    return e.quantize(scaled, e.constant(np.ones(channels, np.float32), "f32"),
                      _quantization_parameter(e, zero_points, qtype), axis=axis)


@converts("quantized_decomposed.dequantize_per_channel.default", weights=(1, 2))
def _dequantize_per_channel(e, x, scales, zero_points, axis, quant_min, quant_max, dtype,
                            out_dtype=None):
    qtype = _quantized_dtype(dtype)
    if zero_points is None:
        zero_points = np.zeros(type_of(x).shape[_axis(axis, type_of(x).rank)], np.int64)
    y = e.dequantize(e.cast(x, qtype), _quantization_parameter(e, scales, "f32"),
                     _quantization_parameter(e, zero_points, qtype),
                     axis=_axis(axis, type_of(x).rank))
    return e.cast(y, e.dtype)


# Convolutions and pooling.

def _padding(padding, kernel, dilation) -> tuple[int, int, int, int]:
    """nn's (top, left, bottom, right) from torch's (h, w) or a string."""
    if padding == "valid":
        return (0, 0, 0, 0)
    if padding == "same":
        total = [d * (k - 1) for k, d in zip(kernel, dilation)]
        return (total[0] // 2, total[1] // 2, total[0] - total[0] // 2, total[1] - total[1] // 2)
    ph, pw = _ints(padding, 2)
    return (ph, pw, ph, pw)


@converts("aten.conv2d.default", "aten.conv2d.padding", "aten.conv1d.default",
          "aten.conv1d.padding", "aten.convolution.default")
def _conv(e, x, weight, bias=None, stride=1, padding=0, dilation=1, *rest):
    if e.node.target == torch.ops.aten.convolution.default:
        transposed, _, groups = rest
        if transposed:
            raise Unsupported("transposed convolution is not supported")
    else:
        groups = rest[0] if rest else 1
    rank = type_of(x).rank
    if type_of(weight).rank == 3:
        # conv1d: a 2-D convolution over a height of 1.
        if rank != 3:
            raise Unsupported("an unbatched 1-D convolution is not supported")
        x = e.reshape(x, type_of(x).shape[:2] + (1,) + type_of(x).shape[2:])
        weight = e.reshape(weight, type_of(weight).shape[:2] + (1,) + type_of(weight).shape[2:])
        stride, dilation = (1,) + _ints(stride)[:1], (1,) + _ints(dilation)[:1]
        padding = padding if isinstance(padding, str) else (0,) + _ints(padding)[:1]
    elif type_of(weight).rank != 4 or rank != 4:
        raise Unsupported(f"only batched 1-D and 2-D convolutions are supported (input rank "
                          f"{rank})")
    kernel = type_of(weight).shape[2:]
    dilation = _ints(dilation, 2)
    y = e.conv2d(x, weight, bias=bias, strides=_ints(stride, 2),
                 padding=_padding(padding, kernel, dilation), dilations=dilation,
                 groups=int(groups))
    return e.reshape(y, e.shape)


def _pool_padding(e, x, kernel, strides, padding, out_shape):
    """nn's padding for torch's symmetric `padding`, with extra bottom and
    right padding where ceil_mode gave torch one more window."""
    top, left = _ints(padding, 2)
    extra = []
    for size, k, s, pad, out in zip(type_of(x).shape[2:], kernel, strides, (top, left),
                                    out_shape[2:]):
        extra.append(max(0, (out - 1) * s + k - (size + 2 * pad)))
    return (top, left, top + extra[0], left + extra[1]), any(extra)


@converts("aten.max_pool2d.default", "aten.max_pool2d_with_indices.default")
def _max_pool2d(e, x, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    if _ints(dilation, 2) != (1, 1):
        raise Unsupported("dilated max pooling is not supported")
    with_indices = e.node.target == torch.ops.aten.max_pool2d_with_indices.default
    out_shape = static_shape(e.result[0] if with_indices else e.result)
    kernel = _ints(kernel_size, 2)
    strides = _ints(stride, 2) if stride else kernel
    pads, _ = _pool_padding(e, x, kernel, strides, padding, out_shape)
    y = e.max_pool2d(x, kernel=kernel, strides=strides, padding=pads)
    return (y, None) if with_indices else y


@converts("aten.avg_pool2d.default")
def _avg_pool2d(e, x, kernel_size, stride=(), padding=0, ceil_mode=False,
                count_include_pad=True, divisor_override=None):
    kernel = _ints(kernel_size, 2)
    strides = _ints(stride, 2) if stride else kernel
    pads, ceil_windows = _pool_padding(e, x, kernel, strides, padding, e.shape)
    if ceil_windows:
        raise Unsupported("average pooling whose ceil_mode adds windows is not supported")
    y = e.avg_pool2d(x, kernel=kernel, strides=strides, padding=pads)
    if divisor_override:
        return e.mul(y, kernel[0] * kernel[1] / divisor_override)
    if not count_include_pad and any(pads):
        # Divide by the window's share of real elements instead of its size.
        n, c, h, w = type_of(x).shape
        share = e.avg_pool2d(e.constant(np.ones((1, 1, h, w))), kernel=kernel, strides=strides,
                             padding=pads)
        y = e.div(y, share)
    return y


@converts("aten.adaptive_avg_pool2d.default", "aten._adaptive_avg_pool2d.default")
def _adaptive_avg_pool2d(e, x, output_size):
    n, c, h, w = type_of(x).shape
    oh, ow = e.shape[2:]
    if (oh, ow) == (1, 1):
        return e.reduce_mean(x, axes=(2, 3), keepdims=True)
    if h % oh or w % ow:
        raise Unsupported(f"adaptive average pooling of {h}x{w} to {oh}x{ow} (sizes that do "
                          "not divide) is not supported")
    return e.avg_pool2d(x, kernel=(h // oh, w // ow), strides=(h // oh, w // ow))


# Normalisations.

def _per_channel(e, value, rank: int) -> ir.Value:
    """A [C] vector shaped to broadcast over the channel dim of NC... data."""
    channels = type_of(value).shape[0]
    return e.reshape(value, (channels,) + (1,) * (rank - 2))


def _batch_norm_eval(e, x, weight, bias, mean, var, eps):
    """`x * scale + shift` per channel, `scale = weight / sqrt(var + eps)`,
    `shift = bias - mean * scale`."""
    rank = type_of(x).rank
    scale = e.rsqrt(e.add(var, float(eps)))
    if weight is not None:
        scale = e.mul(scale, weight)
    shift = e.neg(e.mul(mean, scale))
    if bias is not None:
        shift = e.add(shift, bias)
    return e.add(e.mul(x, _per_channel(e, scale, rank)), _per_channel(e, shift, rank))


@converts("aten._native_batch_norm_legit_no_training.default")
def _native_batch_norm_no_training(e, x, weight, bias, mean, var, momentum, eps):
    return (_batch_norm_eval(e, x, weight, bias, mean, var, eps), None, None)


@converts("aten.batch_norm.default", "aten.native_batch_norm.default")
def _batch_norm(e, x, weight, bias, mean, var, training, momentum, eps, *rest):
    if training or mean is None:
        raise Unsupported("batch normalisation in training mode is not supported "
                          "(call model.eval())")
    y = _batch_norm_eval(e, x, weight, bias, mean, var, eps)
    return y if e.node.target == torch.ops.aten.batch_norm.default else (y, None, None)


def _affine_defaults(e, x, shape, weight, bias):
    dtype = type_of(x).dtype
    weight = weight if weight is not None else e.constant(np.ones(shape), dtype)
    bias = bias if bias is not None else e.constant(np.zeros(shape), dtype)
    return weight, bias


@converts("aten.layer_norm.default", "aten.native_layer_norm.default")
def _layer_norm(e, x, normalized_shape, weight=None, bias=None, eps=1e-5, *rest):
    shape = _ints(normalized_shape)
    weight, bias = _affine_defaults(e, x, shape, weight, bias)
    y = e.layer_norm(x, weight, bias, axis=-len(shape), epsilon=float(eps))
    return y if e.node.target == torch.ops.aten.layer_norm.default else (y, None, None)


def _grouped_norm(e, x, groups, weight, bias, eps):
    """A layer norm over each group's channels and positions, then the
    per-channel affine transform."""
    shape = type_of(x).shape
    grouped = e.reshape(x, (shape[0], groups, math.prod(shape[1:]) // groups))
    gamma, beta = _affine_defaults(e, x, type_of(grouped).shape[-1:], None, None)
    y = e.reshape(e.layer_norm(grouped, gamma, beta, epsilon=float(eps)), shape)
    if weight is not None:
        y = e.mul(y, _per_channel(e, weight, len(shape)))
    if bias is not None:
        y = e.add(y, _per_channel(e, bias, len(shape)))
    return y


@converts("aten.group_norm.default")
def _group_norm(e, x, groups, weight=None, bias=None, eps=1e-5, *rest):
    return _grouped_norm(e, x, int(groups), weight, bias, eps)


@converts("aten.native_group_norm.default")
def _native_group_norm(e, x, weight, bias, batch, channels, positions, groups, eps):
    return (_grouped_norm(e, x, int(groups), weight, bias, eps), None, None)


@converts("aten.instance_norm.default")
def _instance_norm(e, x, weight, bias, mean, var, use_input_stats, momentum, eps, *rest):
    """A group norm with one channel per group; with running statistics,
    batch norm in eval mode."""
    if not use_input_stats:
        return _batch_norm_eval(e, x, weight, bias, mean, var, eps)
    return _grouped_norm(e, x, type_of(x).shape[1], weight, bias, eps)


@converts("aten.rms_norm.default")
def _rms_norm(e, x, normalized_shape, weight=None, eps=None):
    shape = _ints(normalized_shape)
    if eps is None:
        eps = torch.finfo(e.result.dtype).eps
    if weight is None:
        weight = e.constant(np.ones(shape), type_of(x).dtype)
    return e.rms_norm(x, weight, axis=-len(shape), epsilon=float(eps))


@converts("aten.softmax.int", "aten._softmax.default")
def _softmax(e, x, dim, *rest):
    return e.softmax(e.cast(x, e.dtype), axis=int(dim))


@converts("aten.log_softmax.int", "aten._log_softmax.default")
def _log_softmax(e, x, dim, *rest):
    return e.log_softmax(e.cast(x, e.dtype), axis=int(dim))


@converts("aten.scaled_dot_product_attention.default")
def _attention(e, q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
               enable_gqa=False):
    if dropout_p:
        raise Unsupported("attention with dropout is not supported (call model.eval())")
    if enable_gqa and type_of(q).shape[:-2] != type_of(k).shape[:-2]:
        raise Unsupported("grouped-query attention is not supported")
    if attn_mask is not None and type_of(attn_mask).dtype == "i1":
        # A boolean mask keeps the scores where it is true.
        attn_mask = e.select(attn_mask, e.constant(0.0), e.constant(-math.inf))
    return e.attention(q, k, v, mask=attn_mask, causal=bool(is_causal),
                       scale=None if scale is None else float(scale))


# Reductions.

def _reduction(nn_name: str):
    def convert(e, x, dim=None, keepdim=False, *rest, **kwargs):
        x = e.cast(x, e.dtype)
        if type_of(x).rank == 0:
            return x
        return getattr(e, nn_name)(x, axes=_axes(dim, type_of(x).rank), keepdims=bool(keepdim))
    return convert


converts("aten.sum.dim_IntList", "aten.sum.default")(_reduction("reduce_sum"))
converts("aten.mean.dim", "aten.mean.default")(_reduction("reduce_mean"))
converts("aten.amax.default", "aten.max.default")(_reduction("reduce_max"))
converts("aten.amin.default", "aten.min.default")(_reduction("reduce_min"))


@converts("aten.var.correction", "aten.std.correction", "aten.var.dim", "aten.std.dim")
def _variance(e, x, dim=None, unbiased_or_correction=None, keepdim=False, correction=None):
    """The mean of squared deviations, times `n / (n - correction)`."""
    if isinstance(unbiased_or_correction, bool):
        correction = 1 if unbiased_or_correction else 0
    elif unbiased_or_correction is not None:
        correction = unbiased_or_correction
    correction = 1 if correction is None else correction
    axes = _axes(dim, type_of(x).rank)
    count = math.prod(type_of(x).shape[a] for a in axes)
    deviation = e.sub(x, e.reduce_mean(x, axes=axes, keepdims=True))
    var = e.reduce_mean(e.mul(deviation, deviation), axes=axes, keepdims=bool(keepdim))
    if correction:
        var = e.mul(var, count / (count - correction))
    return e.sqrt(var) if e.node.target._overloadpacket.__name__ == "std" else var


# Data movement.

@converts("aten.view.default", "aten._unsafe_view.default", "aten.reshape.default",
          "aten.flatten.using_ints", "aten.unflatten.int", "aten.squeeze.dim",
          "aten.squeeze.dims", "aten.squeeze.default", "aten.unsqueeze.default",
          "aten.view_as.default", "aten.reshape_as.default")
def _reshape(e, x, *args):
    return e.reshape(x, e.shape)


@converts("aten.expand.default", "aten.expand_as.default", "aten.broadcast_to.default")
def _expand(e, x, *args, **kwargs):
    return x if type_of(x).shape == e.shape else e.broadcast_to(x, e.shape)


@converts("aten.permute.default")
def _permute(e, x, dims):
    rank = type_of(x).rank
    return e.transpose(x, perm=tuple(_axis(d, rank) for d in dims))


@converts("aten.transpose.int")
def _transpose(e, x, dim0, dim1):
    rank = type_of(x).rank
    perm = list(range(rank))
    a, b = _axis(dim0, rank), _axis(dim1, rank)
    perm[a], perm[b] = perm[b], perm[a]
    return x if a == b else e.transpose(x, perm=tuple(perm))


@converts("aten.cat.default", "aten.concat.default")
def _cat(e, tensors, dim=0):
    parts = [e.cast(t, e.dtype) for t in tensors if type_of(t).shape != (0,)]
    if len(parts) == 1:
        return parts[0]
    return e.concat(parts, axis=_axis(dim, len(e.shape)))


def _slice(e, x, dim, start, stop, step=1) -> ir.Value:
    shape = type_of(x).shape
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[dim], limits[dim], strides[dim] = start, stop, step
    return e.slice(x, starts=starts, limits=limits, strides=strides)


@converts("aten.slice.Tensor")
def _slice_tensor(e, x, dim=0, start=None, end=None, step=1):
    dim = _axis(dim, type_of(x).rank)
    start, stop, step = slice(start, end, step).indices(type_of(x).shape[dim])
    stop = max(stop, start)
    if (start, stop, step) == (0, type_of(x).shape[dim], 1):
        return x
    return _slice(e, x, dim, start, stop, step)


@converts("aten.narrow.default")
def _narrow(e, x, dim, start, length):
    return _slice_tensor(e, x, dim, start, start + length)


@converts("aten.select.int")
def _select(e, x, dim, index):
    dim = _axis(dim, type_of(x).rank)
    index = index % type_of(x).shape[dim]
    return e.reshape(_slice(e, x, dim, index, index + 1), e.shape)


@converts("aten.split.Tensor", "aten.split_with_sizes.default", "aten.chunk.default",
          "aten.unbind.int", "aten.tensor_split.sections")
def _split(e, x, _=None, dim=0, *rest):
    dim = _axis(dim, type_of(x).rank)
    parts, start = [], 0
    for part in e.result:
        shape = static_shape(part)
        size = shape[dim] if len(shape) == type_of(x).rank else 1
        parts.append(e.reshape(_slice(e, x, dim, start, start + size), shape))
        start += size
    return tuple(parts)


@converts("aten.constant_pad_nd.default", "aten.pad.default")
def _pad(e, x, pad, *rest):
    value = rest[-1] if rest and not isinstance(rest[-1], str) else 0.0
    if rest and isinstance(rest[0], str) and rest[0] != "constant":
        raise Unsupported(f"padding mode '{rest[0]}' is not supported")
    pad = _ints(pad)
    if any(p < 0 for p in pad):
        raise Unsupported("negative padding (cropping) is not supported")
    rank = type_of(x).rank
    low, high = [0] * rank, [0] * rank
    for i in range(len(pad) // 2):
        low[rank - 1 - i], high[rank - 1 - i] = pad[2 * i], pad[2 * i + 1]
    return e.pad(x, low=low, high=high, value=float(value or 0.0))


@converts("getitem")
def _getitem(e, values, index):
    if not isinstance(values, (tuple, list)):
        raise Unsupported("indexing a tensor result is not supported")
    value = values[index]
    if value is None:
        producer = e.node.args[0]
        raise Unsupported(f"result #{index} of {op_name(producer.target)} is not supported")
    return value


# Integers: positions, lookups and masks.

@converts("aten.arange.default", "aten.arange.start", "aten.arange.start_step")
def _arange(e, *args, **kwargs):
    bounds = [kwargs.pop(k) for k in ("start", "end", "step") if k in kwargs]
    start, end, step = (list(args) + bounds + [None, None])[:3]
    if end is None:
        start, end = 0, start
    step = 1 if step is None else step
    (count,) = e.shape
    indices = e.iota(result_type=TensorType((count,), e.dtype), axis=0)
    if step != 1:
        indices = e.mul(indices, step)
    return indices if start == 0 else e.add(indices, start)


@converts("aten.cumsum.default")
def _cumsum(e, x, dim, *rest, **kwargs):
    x = e.cast(x, e.dtype)
    return e.cumsum(x, axis=_axis(dim, type_of(x).rank)) if type_of(x).rank else x


@converts("aten.argmax.default")
def _argmax(e, x, dim=None, keepdim=False):
    if dim is None:
        x = e.reshape(x, (math.prod(type_of(x).shape),))
        return e.reshape(e.argmax(x, axis=0), e.shape)
    return e.argmax(x, axis=_axis(dim, type_of(x).rank), keepdims=bool(keepdim))


@converts("aten.embedding.default")
def _embedding(e, weight, indices, *rest):
    return e.gather(weight, e.cast(indices, "i64"), axis=0)


@converts("aten.index_select.default")
def _index_select(e, x, dim, index):
    dim = _axis(dim, type_of(x).rank)
    return e.reshape(indexing.take(e, x, [index], dim), e.shape)


@converts("aten.index.Tensor")
def _index(e, x, indices):
    """`x[i, j, ...]` with index tensors (None: a whole dim), which must
    index consecutive dims."""
    dims = [d for d, index in enumerate(indices) if index is not None]
    if dims != list(range(dims[0], dims[-1] + 1)):
        raise Unsupported("indexing with tensors separated by whole dims is not supported")
    if any(type_of(indices[d]).dtype == "i1" for d in dims):
        raise Unsupported("indexing with a boolean mask is not supported (its result's size "
                          "depends on the data)")
    return e.reshape(indexing.take(e, x, [indices[d] for d in dims], dims[0]), e.shape)


@converts("aten.gather.default")
def _gather(e, x, dim, index, sparse_grad=False):
    if type_of(x).rank == 0:
        return x
    return indexing.take_along_axis(e, x, index, _axis(dim, type_of(x).rank))


@converts("aten.triu.default")
def _triu(e, x, diagonal=0):
    return indexing.triangle(e, x, diagonal, upper=True)


@converts("aten.tril.default")
def _tril(e, x, diagonal=0):
    return indexing.triangle(e, x, diagonal, upper=False)


# ---------------------------------------------------------------------------
# The importer.


@dataclass
class _Failure:
    node: torch.fx.Node
    message: str
    what: str | None = None  # default: the node's op, or the input's name


class _Importer:
    def __init__(self, program: "torch.export.ExportedProgram", params: str, name: str):
        self.program = program
        self.params = params
        self.name = name
        self.values: dict[torch.fx.Node, Any] = {}
        self.stand_ins: set[torch.fx.Node] = set()
        self.failures: list[_Failure] = []

    def location(self, node: torch.fx.Node) -> ir.Location:
        found = source_line(node)
        return ir.Location.file(found[0], found[1], 0) if found else ir.Location.unknown()

    def materialize(self, value):
        """An ir.Value for a converted argument (a constant weight becomes
        an `arith.constant`, once)."""
        if isinstance(value, Weight):
            if value.value is None:
                value.value = _constant(value.array, value.dtype, ir.Location.name(
                    value.name, childLoc=ir.Location.current))
            return value.value
        return value

    def argument(self, arg, raw: bool = False):
        if isinstance(arg, torch.fx.Node):
            value = self.values[arg]
            return value if raw else self.materialize(value)
        if isinstance(arg, (list, tuple)):
            return type(arg)(self.argument(a) for a in arg)
        return arg

    def stand_in(self, node: torch.fx.Node, fake=None):
        """A value of the node's result type (`tensor.empty`), so that the
        nodes after an unsupported one are still visited."""
        fake = node.meta.get("val") if fake is None else fake
        if isinstance(fake, (tuple, list)):
            return tuple(self.stand_in(node, f) for f in fake)
        if not isinstance(fake, torch.Tensor):
            return None
        try:
            shape = static_shape(fake)
            dtype = _ELEMENT_TYPES.get(fake.dtype)
            element = ir.Type.parse(dtype) if dtype else ir.IntegerType.get_signless(
                fake.element_size() * 8)
        except Unsupported:
            return None
        return tensor.EmptyOp(shape, element).result

    def convert(self, node: torch.fx.Node):
        name = op_name(node.target)
        converter = _CONVERTERS.get(name)
        if converter is None:
            raise Unsupported("")
        raw = _RAW_WEIGHTS.get(name, ())
        args = [self.argument(a, raw=i in raw) for i, a in enumerate(node.args)]
        kwargs = {k: self.argument(v) for k, v in node.kwargs.items()
                  if k not in ("device", "layout", "pin_memory", "memory_format",
                               "non_blocking")}
        if "dtype" in kwargs:
            kwargs.pop("dtype")
        return converter(Emitter(self, node, self.location(node)), *args, **kwargs)

    def visit(self, node: torch.fx.Node):
        # A node fed by a stand-in is reported only for an op that has no
        # nn form at all: its other failures follow from the first one.
        after_failure = any(a in self.stand_ins for a in node.all_input_nodes)
        try:
            with self.location(node):
                self.values[node] = self.convert(node)
        except (Unsupported, CompileError, TypeError, ValueError) as error:
            if not after_failure or op_name(node.target) not in _CONVERTERS:
                self.failures.append(_Failure(node, _message(error)))
            with self.location(node):
                self.values[node] = self.stand_in(node)
            self.stand_ins.add(node)

    def parameters(self) -> dict[str, tuple[str, str, torch.Tensor | None]]:
        """Placeholder name -> (kind, target, tensor) for the exported
        program's inputs that are not the user's: kind `parameter` (a
        parameter or buffer), `constant` (a lifted tensor constant) or
        `opaque` (not a tensor)."""
        from torch.export.graph_signature import InputKind
        found = {}
        for spec in self.program.graph_signature.input_specs:
            if spec.kind == InputKind.USER_INPUT:
                continue
            if spec.kind in (InputKind.PARAMETER, InputKind.BUFFER):
                tensor_value = self.program.state_dict.get(spec.target)
                if tensor_value is None:
                    tensor_value = self.program.constants[spec.target]
                kind = "parameter"
            else:
                tensor_value = self.program.constants.get(spec.target)
                kind = "constant"
            if not isinstance(tensor_value, torch.Tensor):
                kind, tensor_value = "opaque", None
            found[spec.arg.name] = (kind, spec.target, tensor_value)
        return found

    def run(self) -> ir.Module:
        graph = self.program.graph
        placeholders = [n for n in graph.nodes if n.op == "placeholder"]
        parameters = self.parameters()
        arguments: list[tuple[torch.fx.Node, str | None]] = []
        constants: dict[torch.fx.Node, tuple[str, torch.Tensor]] = {}
        for node in placeholders:
            spec = parameters.get(node.name)
            if spec is None:
                arguments.append((node, None))
            elif spec[0] == "opaque":
                if node.users:
                    self.failures.append(_Failure(node, "it is not a tensor",
                                                  f"constant '{spec[1]}'"))
            elif not node.users:
                continue
            elif spec[0] == "parameter" and self.params == "arguments":
                arguments.append((node, spec[1]))
            else:
                constants[node] = (spec[1], spec[2])

        input_types = []
        for node, parameter in arguments:
            fake = node.meta.get("val")
            try:
                if not isinstance(fake, torch.Tensor):
                    raise Unsupported(f"a non-tensor input ({type(fake).__name__}) is not "
                                      "supported")
                input_types.append(TensorType(static_shape(fake), element_type(fake.dtype)))
            except Unsupported as error:
                self.failures.append(_Failure(node, str(error),
                                              f"parameter '{parameter}'" if parameter
                                              else f"input '{node.name}'"))
                self.stand_ins.add(node)
                input_types.append(TensorType((0,), "f32"))

        module_location = self.module_location()
        module = ir.Module.create(loc=module_location)
        with ir.InsertionPoint(module.body), module_location:
            function = func.FuncOp(self.name, ir.FunctionType.get(
                [t.to_mlir() for t in input_types], []))
            block = function.add_entry_block()
            with ir.InsertionPoint(block):
                for (node, _), value in zip(arguments, block.arguments):
                    self.values[node] = self.stand_in(node) if node in self.stand_ins else value
                for node, (target, tensor_value) in constants.items():
                    try:
                        self.values[node] = Weight(target, _array(tensor_value),
                                                   element_type(tensor_value.dtype))
                    except Unsupported as error:
                        self.failures.append(_Failure(node, str(error), f"constant '{target}'"))
                        self.values[node] = self.stand_in(node)
                        self.stand_ins.add(node)
                output = None
                for node in graph.nodes:
                    if node.op == "call_function":
                        self.visit(node)
                    elif node.op == "output":
                        output = node
                    elif node.op != "placeholder":
                        self.failures.append(_Failure(node, f"graph node kind '{node.op}' "
                                                            "is not supported"))
                results = self.results(output)
                if self.failures:
                    raise self.error()
                func.ReturnOp(results)
            function.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
                [t.to_mlir() for t in input_types], [r.type for r in results]))
            if self.params == "arguments":
                function.arg_attrs = ir.ArrayAttr.get([ir.DictAttr.get(
                    {"lamina.parameter": ir.StringAttr.get(parameter)} if parameter else {})
                    for _, parameter in arguments])
        return module

    def results(self, output: torch.fx.Node) -> list[ir.Value]:
        from torch.export.graph_signature import OutputKind
        specs = self.program.graph_signature.output_specs
        results = []
        for index, (spec, arg) in enumerate(zip(specs, output.args[0])):
            if spec.kind != OutputKind.USER_OUTPUT:
                self.failures.append(_Failure(output, f"the model mutates "
                                                      f"'{spec.target}' (call model.eval())"))
                continue
            value = self.values.get(arg) if isinstance(arg, torch.fx.Node) else None
            if not isinstance(value, (ir.Value, Weight)):
                if not (isinstance(arg, torch.fx.Node) and arg in self.stand_ins):
                    self.failures.append(_Failure(output, f"output #{index} is not a tensor"))
                continue
            results.append(self.materialize(value))
        return results

    def module_location(self) -> ir.Location:
        for node in self.program.graph.nodes:
            found = source_line(node)
            if found:
                return ir.Location.file(found[0], found[1], 0)
        return ir.Location.unknown()

    def error(self) -> UnsupportedOpsError:
        diagnostics, ops = [], []
        for failure in self.failures:
            node = failure.node
            found = source_line(node)
            filename, line = found if found else (None, 0)
            what = failure.what or (op_name(node.target) if node.op == "call_function"
                                    else repr(node.name))
            message = f"{what} is not supported" + (
                f": {failure.message}" if failure.message else "")
            diagnostics.append(Diagnostic(filename, line, 0, "error", message))
            ops.append((what, filename, line))
        return UnsupportedOpsError(diagnostics, ops)


def _message(error: Exception) -> str:
    if isinstance(error, CompileError) and error.diagnostics:
        return "; ".join(d.message for d in error.diagnostics)
    return str(error)


def _array(value: torch.Tensor) -> np.ndarray:
    value = value.detach().cpu()
    if value.dtype == torch.bfloat16:
        import ml_dtypes
        return value.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return value.numpy()


# ---------------------------------------------------------------------------
# Entry points.


def export(model: "torch.nn.Module", example_inputs: Sequence) -> "torch.export.ExportedProgram":
    """`model` exported on `example_inputs` and functionalised
    (`run_decompositions({})`). Raises CompileError where torch.export
    cannot capture it."""
    if not isinstance(example_inputs, tuple):
        example_inputs = tuple(example_inputs) if isinstance(example_inputs, list) else (
            example_inputs,)
    try:
        program = torch.export.export(model, example_inputs)
    except Exception as error:  # torch.export raises many kinds; all mean "cannot capture"
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise CompileError([Diagnostic(None, 0, 0, "error",
                                       f"torch.export cannot capture the model: {first}")]) \
            from None
    return _decomposed(program.run_decompositions({}))


def _unmapped(program) -> set:
    return {n.target for n in program.graph.nodes
            if n.op == "call_function" and op_name(n.target) not in _CONVERTERS}


def _decomposed(program: "torch.export.ExportedProgram") -> "torch.export.ExportedProgram":
    """`program` with the ops that have no converter decomposed by
    PyTorch's core ATen decompositions, where every op of the decomposition
    has one (so that an error names the model's op, not its pieces)."""
    from torch._decomp import core_aten_decompositions
    table = core_aten_decompositions()
    for _ in range(3):
        unmapped = _unmapped(program)
        candidates = {op: table[op] for op in unmapped if op in table}
        if not candidates:
            break
        decomposed = program.run_decompositions(candidates)
        if _unmapped(decomposed) - unmapped:
            # Some decomposition brought in unmapped ops: keep only those
            # that do not, one by one.
            candidates = {op: d for op, d in candidates.items()
                          if not _unmapped(program.run_decompositions({op: d})) - unmapped}
            if not candidates:
                break
            decomposed = program.run_decompositions(candidates)
        program = decomposed
    return program


def from_exported_program(program: "torch.export.ExportedProgram", params: str = "arguments",
                          name: str = "main", context: ir.Context | None = None) -> ir.Module:
    """A verified module with one public function `name` computing
    `program` with nn ops. Raises UnsupportedOpsError (all unsupported ops
    at once) or CompileError."""
    if params not in PARAMS:
        raise ValueError(f"params must be one of {', '.join(PARAMS)}, got {params!r}")
    context = context or make_context()
    with context, DiagnosticCollector(context) as diagnostics:
        module = _Importer(program, params, name).run()
        if not verify(module.operation):
            raise CompileError(diagnostics.errors)
    return module


def from_torch(model: "torch.nn.Module", example_inputs: Sequence, params: str = "arguments",
               name: str = "main", context: ir.Context | None = None) -> ir.Module:
    """A Lamina module of nn ops computing `model` on inputs shaped like
    `example_inputs` (a tensor or a tuple of them), through torch.export.

    `params="arguments"`: the function takes the parameters and buffers the
    graph uses (in torch.export's order; `weights(module, model)` gives
    their arrays), then the inputs. `params="constants"`: they are
    constants in the module and the function takes the inputs only.
    Raises UnsupportedOpsError listing every op that has no nn form, with
    its source line, or CompileError."""
    if params not in PARAMS:
        raise ValueError(f"params must be one of {', '.join(PARAMS)}, got {params!r}")
    return from_exported_program(export(model, example_inputs), params, name, context)


def parameter_names(module: ir.Module, name: str = "main") -> list[str | None]:
    """The `lamina.parameter` name of each argument of function `name`
    (None for an input of the model)."""
    function = next(op for op in module.body.operations
                    if op.operation.name == "func.func"
                    and ir.StringAttr(op.attributes["sym_name"]).value == name)
    if "arg_attrs" not in function.attributes:
        return [None] * len(function.regions[0].blocks[0].arguments)
    names = []
    for attrs in ir.ArrayAttr(function.attributes["arg_attrs"]):
        attrs = ir.DictAttr(attrs)
        names.append(ir.StringAttr(attrs["lamina.parameter"]).value
                     if "lamina.parameter" in attrs else None)
    return names


def weights(module: ir.Module, model: "torch.nn.Module", name: str = "main") -> list[np.ndarray]:
    """The arrays of the parameters and buffers that function `name` of a
    module imported with `params="arguments"` takes before the inputs."""
    state = dict(model.named_parameters(remove_duplicate=False))
    state.update(model.named_buffers(remove_duplicate=False))
    return [_array(state[p]) for p in parameter_names(module, name) if p is not None]


__all__ = ["UnsupportedOpsError", "export", "from_exported_program", "from_torch",
           "parameter_names", "supported_ops", "weights"]
