"""Conversion of the `nn` dialect to upstream linalg, tensor, arith and math.

This lowering expects verified nn ops on ranked tensors of f32, f16 and
bf16 (i1, i32 and i64 where the op allows them): the nn type rules have
resolved every shape, up to the '?' dims of the ops that take them. It
makes every nn op illegal, converts the ops of other dialects that
registered a lowering here, and leaves all other ops alone.

Elementwise ops and reductions lower from their scalar definitions
(`lamina.scalar`: an elementwise op's `scalar` method, a reduction's
`identity`, `combine` and `finish`), Lamina's and plugins' alike. Ops
defined outside this file join the conversion otherwise through a public
API: `@lowering(OpClass)` registers a function building an op's
replacement (in the conversion's class-keyed registry,
`lamina.lowering.registry`, where `convert-nn-to-hw` keeps its own),
and `@scalar_body(OpClass)` the scalar computation, in arith and math
ops, of an elementwise nn op the scalar form cannot write; the
builders `elementwise(result_type, operands, body)` and `constant(value)`
are what such functions are usually written with.

It produces:

* named linalg ops where upstream has one: `linalg.matmul` and
  `linalg.batch_matmul` (batch dims are broadcast with `linalg.broadcast`
  where needed and collapsed into one), `linalg.conv_2d_nchw_fchw` and, for
  groups > 1, `linalg.conv_2d_ngchw_gfchw` (channels-last convolutions
  between transposes), `linalg.depthwise_conv_2d_nhwc_hwc` for a
  channels-last depthwise one (one filter per channel: its input and
  result stay NHWC, its filter is put in HWC order, with NumPy for a
  constant), `linalg.pooling_nchw_max`, `linalg.pooling_nchw_sum`
  and their NHWC forms, `linalg.transpose`, `linalg.broadcast`,
  `linalg.fill`;
* `linalg.generic` for elementwise ops (operands broadcast through their
  indexing maps, NumPy rules) and for reductions, with arith and math ops in
  their bodies;
* `linalg.generic` for `nn.quantize` and `nn.dequantize`, the scale and
  zero point read per tensor or at the channel's index; ui8 tensors are
  stored as i8 tensors of the same bits (function arguments and results,
  constants, calls: arith computes on signless integers only) and widen
  with `arith.extui`;
* `linalg.generic` with `linalg.index` for `nn.iota`, with a
  `tensor.extract` in its body (the index clamped into range) for
  `nn.gather`, and over a second loop along the axis for `nn.cumsum`
  (element `i` sums the elements `j <= i`: quadratic in the axis, which
  the sequence lengths it serves keep short) and `nn.argmax` (the maximum,
  then the least index holding it);
* tensor ops for shapes: `tensor.empty`, `tensor.collapse_shape` and
  `tensor.expand_shape` for reshapes, `tensor.extract_slice`, `tensor.pad`
  (also for the padding of convolutions and pooling) and `tensor.concat`;
* with `attention-query-tile`, flash-style attention: a `scf.forall` over
  (batch x heads, query tiles) whose body runs an online softmax over key
  tiles in a `scf.for`, small static linalg ops inside (the CPU pipeline
  asks for it; other users get attention as whole rows of scores).

Numerics. f16 and bf16 are computed on in f32: every generic body extends
its operands to f32 and rounds its result once, and contractions, sum
pooling, reductions and normalisations accumulate in f32. Integers are
computed on and accumulated in their own type (arith's integer ops,
signed where signedness matters). This is what the
NumPy references of the nn ops do, so the results match them. Softmax and
attention subtract the row maximum before `exp`; causal attention hides
later keys with -inf before that maximum; `nn.attention`'s scale defaults
to 1/sqrt(D). Composite ops lower to fused generics here rather than
through their decomposition into nn ops.

Empty tensors. An op whose results all have a dim of 0 computes nothing:
its results become `tensor.empty`, whatever the op. An op with an empty
operand and a non-empty result computes its reference's value: a
reduction over an empty dim gives its identity (zeros for a sum, a matmul
or a convolution over no channels), a pad of an empty operand its padding
value, attention over no keys 0 (every query's keys are hidden), and an
empty piece of a concat is left out. The empty results are
replaced first, and nn ops whose results nothing uses then (fusion groups
included) are erased rather than lowered.

Dynamic dims. A '?' dim's size is read with `tensor.dim` from an operand
that has it, and every `tensor.empty` takes it from there; a reshape keeps
or multiplies '?' dims through `tensor.collapse_shape` and
`tensor.expand_shape` (whose output sizes are computed from the operand's);
a mean or a normalisation over '?' dims divides by their count, computed
once (f32) outside its loops.
Where the type rules leave the equality of two sizes to run time (a '?'
dim against a static one or another '?' of an elementwise op's operands,
matmul's contraction dims), a `cf.assert` checks it, its message naming
the op, its location and the dims. Upstream lowers a failed `cf.assert` to
`abort()`; the runtime checks the same rules before a call
(`lamina.shapes`), so a program compiled with Lamina reaches them only
from other callers. Flash attention, convolutions and the data movement
ops other than transpose and reshape take static shapes only (the nn
verifier says so at the op).

Fusion groups. `nn.fused` becomes a `func.call` of its body function
(whose nn ops this pass lowers like any other function's), carrying the
group's kind as `lamina.fusion_kind`. Upstream passes that follow thus work
within each group and never across groups; `nn-inline-fused` inlines the
calls and marks the ops each group produced.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import prod, sqrt
from typing import Any, Callable, Sequence

import numpy as np
from mlir import ir
from mlir.dialects import arith, cf, func, linalg, math, scf, tensor

from lamina import scalar
from lamina.dialects import nn
from lamina.dialects.nn import NN
from lamina.dialects.opdef import Op, lookup_op
from lamina.linalg_builders import defining_op, permuted_constant
from lamina.lowering.registry import lowering as registry_lowering
from lamina.lowering.registry import registry
from lamina.types import UNSIGNED_TYPES, TensorType, VerifyError
from lamina.pass_registry import Pass, PassFailure, register_pass

Shape = tuple[int, ...]
# An operand of a generic: a value read through an indexing map of the loops.
Indexed = tuple[ir.Value, ir.AffineMap]


# ---------------------------------------------------------------------------
# Scalars.


def _f32() -> ir.Type:
    return ir.F32Type.get()


def _is_integer(t: ir.Type) -> bool:
    return isinstance(t, ir.IntegerType)


def constant(value: float, element_type: ir.Type | None = None) -> ir.Value:
    """A scalar constant (f32 by default) at the current insertion point;
    for an integer type, infinities are its least and greatest values."""
    element_type = element_type or _f32()
    if _is_integer(element_type):
        width = ir.IntegerType(element_type).width
        if width == 1:
            return arith.constant(element_type, int(bool(value)))
        if value in (float("inf"), float("-inf")):
            bound = 2 ** (width - 1)
            value = bound - 1 if value > 0 else -bound
        return arith.constant(element_type, int(value))
    return arith.constant(element_type, float(value))


def _widen(value: ir.Value) -> ir.Value:
    """f16 and bf16 are computed on in f32."""
    if isinstance(value.type, (ir.F16Type, ir.BF16Type)):
        return arith.extf(_f32(), value)
    return value


def _convert(value: ir.Value, target: ir.Type) -> ir.Value:
    """Converts a scalar with `nn.cast`'s rules: float or integer to i1 is
    `x != 0` (NaN counts as true, as in NumPy), i1 to a number is 0 or 1,
    float to integer rounds toward zero, integer to float to nearest,
    integers are truncated or sign-extended."""
    source = value.type
    if source == target:
        return value
    boolean = ir.IntegerType.get_signless(1)
    if target == boolean:
        if _is_integer(source):
            return arith.cmpi(arith.CmpIPredicate.ne, value, constant(0, source))
        return arith.cmpf(arith.CmpFPredicate.UNE, value, constant(0.0, source))
    if source == boolean:
        if _is_integer(target):
            return arith.extui(target, value)
        value = arith.uitofp(_f32(), value)
        return scalar.cast_float(value, target)
    if _is_integer(source) and _is_integer(target):
        if ir.IntegerType(target).width < ir.IntegerType(source).width:
            return arith.trunci(target, value)
        return arith.extsi(target, value)
    if _is_integer(target):
        return arith.fptosi(target, _widen(value))
    if _is_integer(source):
        return arith.sitofp(target, value)
    return scalar.cast_float(value, target)


# ---------------------------------------------------------------------------
# Tensors.


def _shape(value: ir.Value) -> Shape:
    """The shape of a tensor value, None for a '?' dim."""
    t = ir.RankedTensorType(value.type)
    return tuple(None if t.is_dynamic_dim(d) else t.shape[d] for d in range(t.rank))


# A size: static, or an index value read at run time.
Size = int | ir.Value


def _size(value: ir.Value, dim: int) -> Size:
    """The size of dim `dim` of a tensor: static, or a `tensor.dim`."""
    static = _shape(value)[dim]
    return static if static is not None else tensor.dim(value, _index(dim))


def _sizes(value: ir.Value) -> list[Size]:
    return [_size(value, d) for d in range(len(_shape(value)))]


def _index_value(size: Size) -> ir.Value:
    return _index(size) if isinstance(size, int) else size


def _static_prod(shape: Sequence[int | None]) -> int | None:
    return None if None in shape else prod(shape)


def _size_prod(sizes: Sequence[Size]) -> Size:
    """The product of sizes, folded where static."""
    static = prod(s for s in sizes if isinstance(s, int))
    dynamic = [s for s in sizes if not isinstance(s, int)]
    if not dynamic:
        return static
    total = dynamic[0]
    for size in dynamic[1:]:
        total = arith.muli(total, size)
    return total if static == 1 else arith.muli(total, _index(static))


# The nn op being lowered: the run-time checks name it.
_LOWERING: list[ir.Operation] = []


def _check_equal(size: ir.Value, expected: Size, what: str) -> None:
    """A run-time check (`cf.assert`) that `size` is `expected`."""
    operation = _LOWERING[-1] if _LOWERING else None
    where = ""
    if operation is not None:
        where = f"'{operation.name}' op at {_location_text(operation.location)}: "
    equal = arith.cmpi(arith.CmpIPredicate.eq, size, _index_value(expected))
    cf.assert_(equal, f"{where}{what}")


def _location_text(location: ir.Location) -> str:
    text = str(location)
    if text.startswith('loc("') and text.endswith(")"):
        name, _, position = text[5:-1].partition('"')
        return name + position
    return text


def _element_type(value: ir.Value) -> ir.Type:
    return ir.RankedTensorType(value.type).element_type


def _tensor_type(shape: Sequence[int | None], element_type: ir.Type) -> ir.RankedTensorType:
    dynamic = ir.ShapedType.get_dynamic_size()
    return ir.RankedTensorType.get([dynamic if d is None else d for d in shape], element_type)


def _filled(sizes: Sequence[Size], value: float, element_type: ir.Type | None = None) -> ir.Value:
    """A tensor of `sizes` (static, or index values) holding `value`."""
    element_type = element_type or _f32()
    return linalg.fill(constant(value, element_type),
                       outs=[tensor.empty(list(sizes), element_type)])


def _reassociation(fine: Shape, coarse: Shape) -> list[list[int]] | None:
    """Groups of consecutive `fine` dims whose sizes multiply to each
    `coarse` dim, or None when `coarse` is not such a grouping."""
    if not coarse:
        return [] if prod(fine) == 1 else None
    groups, start = [], 0
    for index, size in enumerate(coarse):
        if start >= len(fine):
            return None
        end = start + 1
        if index == len(coarse) - 1:
            end = len(fine)
        else:
            while end < len(fine) and prod(fine[start:end]) != size:
                end += 1
        if prod(fine[start:end]) != size:
            return None
        groups.append(list(range(start, end)))
        start = end
    return groups


def _dynamic_reassociation(fine: Shape, coarse: Shape) -> list[list[int]] | None:
    """The grouping of `fine` dims into `coarse` ones where '?' dims take
    part, left to right: a static coarse dim takes static fine dims up to
    its size, a '?' one the fine dims through the next '?' (through the
    last where no later coarse dim is '?': `?x?x768` into `?x768`); unit
    fine dims left at the end join the last group. None where this does
    not fit."""
    groups: list[list[int]] = []
    i = 0
    for c, size in enumerate(coarse):
        group: list[int] = []
        if size is None:
            unknown = [d for d in range(i, len(fine)) if fine[d] is None]
            if not unknown:
                return None
            last = unknown[-1] if None not in coarse[c + 1:] else unknown[0]
            group = list(range(i, last + 1))
        else:
            product = 1
            while i + len(group) < len(fine) and fine[i + len(group)] is not None and (
                    not group or product < size):
                product *= fine[i + len(group)]
                group.append(i + len(group))
            if product != size:
                return None
        groups.append(group)
        i = group[-1] + 1
    while groups and i < len(fine) and fine[i] == 1:
        groups[-1].append(i)
        i += 1
    return groups if i == len(fine) else None


def _reshape(value: ir.Value, shape: Sequence[int | None],
             groups: list[list[int]] | None = None,
             sizes: Sequence[Size] | None = None) -> ir.Value:
    """Row-major reshape by collapsing or expanding dims (by `groups` of
    the finer shape's dims where given, else the first grouping that
    fits); static shapes that are not groupings of each other go through
    the flat vector. An expansion's '?' sizes are `sizes` where given, else
    computed from the operand's (one '?' dim per group)."""
    shape, source = tuple(shape), _shape(value)
    if shape == source:
        return value
    if None in shape or None in source:
        return _dynamic_reshape(value, shape, groups, sizes)
    result_type = _tensor_type(shape, _element_type(value))
    if len(shape) < len(source):
        groups = groups or _reassociation(source, shape)
        if groups is not None:
            return tensor.collapse_shape(result_type, value, groups)
    else:
        groups = groups or _reassociation(shape, source)
        if groups is not None:
            return tensor.expand_shape(result_type, value, groups, [], list(shape))
    return _reshape(_reshape(value, (prod(source),)), shape)


def _dynamic_reshape(value: ir.Value, shape: Shape, groups: list[list[int]] | None,
                     sizes: Sequence[Size] | None) -> ir.Value:
    source = _shape(value)
    result_type = _tensor_type(shape, _element_type(value))
    collapse = len(shape) < len(source)
    fine, coarse = (source, shape) if collapse else (shape, source)
    groups = groups or _dynamic_reassociation(fine, coarse)
    if groups is None:
        operation = _LOWERING[-1] if _LOWERING else None
        raise PassFailure(f"no lowering of a reshape of {_tensor_type(source, _f32())} to "
                          f"{result_type} with '?' dims (they must group into each other)",
                          operation.location if operation is not None else None)
    if collapse:
        return tensor.collapse_shape(result_type, value, groups)
    if sizes is None:
        sizes = []
        for c, group in enumerate(groups):
            unknown = [d for d in group if shape[d] is None]
            for d in group:
                if shape[d] is not None:
                    sizes.append(shape[d])
                elif len(unknown) > 1:
                    raise PassFailure(f"the sizes of a reshape to {result_type} are not "
                                      "known: give them", None)
                else:
                    known = prod(shape[e] for e in group if shape[e] is not None)
                    whole = _size(value, c)
                    sizes.append(whole if known == 1 else arith.divui(whole, _index(known)))
    dynamic = [s for s in sizes if not isinstance(s, int)]
    static = [s if isinstance(s, int) else ir.ShapedType.get_dynamic_size() for s in sizes]
    return tensor.expand_shape(result_type, value, groups, dynamic, static)


def _broadcast(value: ir.Value, shape: Sequence[int]) -> ir.Value:
    """Broadcasts `value` to `shape` (NumPy rules) with `linalg.broadcast`,
    which adds dims: size-1 dims that grow are dropped first."""
    shape, source = tuple(shape), _shape(value)
    if shape == source:
        return value
    offset = len(shape) - len(source)
    added = [d for d in range(len(shape))
             if d < offset or (source[d - offset] == 1 and shape[d] != 1)]
    kept = [shape[d] for d in range(len(shape)) if d not in added]
    init = tensor.empty(list(shape), _element_type(value))
    return linalg.broadcast(_reshape(value, kept), outs=[init], dimensions=added).results[0]


def _pad(value: ir.Value, low: Sequence[int], high: Sequence[int], fill: float) -> ir.Value:
    if not any(low) and not any(high):
        return value
    element_type = _element_type(value)
    shape = [d + lo + hi for d, lo, hi in zip(_shape(value), low, high)]
    if 0 in _shape(value):
        # Nothing to insert: all padding (bufferization would insert the
        # empty value at an offset past the end of the result).
        return _filled(shape, fill, element_type)
    padded = tensor.PadOp(_tensor_type(shape, element_type), value, [], [], list(low), list(high))
    block = padded.regions[0].blocks.append(*[ir.IndexType.get()] * len(shape))
    with ir.InsertionPoint(block):
        tensor.YieldOp(constant(fill, element_type))
    return padded.result


# ---------------------------------------------------------------------------
# Generics.


def _dims(rank: int, dims: Sequence[int]) -> ir.AffineMap:
    """The map from `rank` loops to the listed loop dims."""
    return ir.AffineMap.get(rank, 0, [ir.AffineDimExpr.get(d) for d in dims])


def _broadcast_map(shape: Shape, domain: Shape) -> ir.AffineMap:
    """Reads an operand of `shape` broadcast (NumPy rules) over `domain`: it
    is aligned to the trailing loops, and size-1 dims that grow read index 0."""
    offset = len(domain) - len(shape)
    exprs = [ir.AffineConstantExpr.get(0) if size == 1 and domain[offset + i] != 1
             else ir.AffineDimExpr.get(offset + i) for i, size in enumerate(shape)]
    return ir.AffineMap.get(len(domain), 0, exprs)


def _kept(domain: Shape, reduced: Sequence[int]) -> Shape:
    return tuple(size for d, size in enumerate(domain) if d not in reduced)


def _kept_map(rank: int, reduced: Sequence[int]) -> ir.AffineMap:
    """The map from `rank` loops to the loops a reduction keeps."""
    return _dims(rank, [d for d in range(rank) if d not in reduced])


def _rows(value: ir.Value, domain: Shape, reduced: Sequence[int]) -> Indexed:
    """A row statistic (shaped like the kept dims of a reduction over
    `domain`) read at every element of its row."""
    return value, _kept_map(len(domain), reduced)


def _indexed(operand: ir.Value | Indexed, domain: Shape) -> Indexed:
    if isinstance(operand, tuple):
        return operand
    return operand, _broadcast_map(_shape(operand), domain)


def _loop_sizes(domain: Shape, operands: Sequence[ir.Value | Indexed]) -> list[Size]:
    """The sizes of the loops `domain`: static, or read from an operand
    that has the loop's '?' dim. Every other operand dim of a '?' size
    that a loop reads is checked at run time to equal it."""
    indexed = [_indexed(operand, domain) for operand in operands]
    readers: list[list[tuple[int, ir.Value, int]]] = [[] for _ in domain]
    for number, (value, indexing) in enumerate(indexed):
        shape = _shape(value)
        for dim, expr in enumerate(indexing.results):
            if isinstance(expr, ir.AffineDimExpr) and shape[dim] is None:
                readers[ir.AffineDimExpr(expr).position].append((number, value, dim))
    sizes: list[Size] = []
    for loop, size in enumerate(domain):
        dynamic = readers[loop]
        if size is None:
            if not dynamic:
                raise PassFailure(f"loop {loop} of a generic has a '?' size no operand gives",
                                  None)
            number, value, dim = dynamic[0]
            size, dynamic = tensor.dim(value, _index(dim)), dynamic[1:]
            what = f"operand #{number}'s dim {dim}"
        else:
            what = str(size)
        for number, value, dim in dynamic:
            _check_equal(tensor.dim(value, _index(dim)), size,
                         f"dim {dim} of operand #{number} must equal {what} (loop {loop})")
        sizes.append(size)
    return sizes


def _generic(domain: Shape, operands: Sequence[ir.Value | Indexed], init: ir.Value,
             body: Callable[..., ir.Value], reduced: Sequence[int] = (),
             combine: Callable[[ir.Value, ir.Value], ir.Value] | None = None,
             widen: bool = True) -> ir.Value:
    """A `linalg.generic` over the loops `domain` writing `init`, which is
    indexed by the loops not in `reduced`. `body` gets one scalar per
    operand (f16/bf16 widened to f32 unless `widen` is off); a reduction
    folds its value into the accumulator (f32) with `combine`."""
    indexed = [_indexed(operand, domain) for operand in operands]
    rank = len(domain)
    maps = [m for _, m in indexed] + [_kept_map(rank, reduced)]
    iterators = [linalg.IteratorType.reduction if d in reduced else linalg.IteratorType.parallel
                 for d in range(rank)]
    op = linalg.GenericOp([init.type], [v for v, _ in indexed], [init], maps, iterators)
    block = op.regions[0].blocks.append(*[_element_type(v) for v, _ in indexed],
                                        _element_type(init))
    *inputs, accumulator = block.arguments
    with ir.InsertionPoint(block):
        value = body(*[_widen(a) if widen else a for a in inputs])
        if combine is not None:
            value = combine(value, accumulator)
        linalg.YieldOp([_convert(value, _element_type(init))])
    return op.result


def elementwise(result: TensorType, operands: Sequence[ir.Value | Indexed],
                body: Callable[..., ir.Value], widen: bool = True) -> ir.Value:
    """A `linalg.generic` computing `body` at every element of `result`:
    the operands are broadcast into it (NumPy rules), and `body` gets one
    scalar per operand (f16/bf16 widened to f32 unless `widen` is off) and
    returns the scalar result, which is rounded to the result's type."""
    sizes = _loop_sizes(result.shape, operands)
    init = tensor.empty(sizes, ir.Type.parse(result.dtype))
    return _generic(result.shape, operands, init, body, widen=widen)


def _narrow(value: ir.Value, result: TensorType) -> ir.Value:
    """Rounds an f32 accumulator to the result's element type."""
    if _element_type(value) == ir.Type.parse(result.dtype):
        return value
    return elementwise(result, [value], lambda x: x)


@dataclass(frozen=True)
class _Reduction:
    identity: float
    combine: Callable[[ir.Value, ir.Value], ir.Value]


# maximumf/minimumf propagate NaN, as NumPy's max and min do.
_SUM = _Reduction(0.0, arith.addf)
_MAX = _Reduction(float("-inf"), arith.maximumf)


def _reduce(domain: Shape, reduced: Sequence[int], operands: Sequence[ir.Value | Indexed],
            reduction: _Reduction, body: Callable[..., ir.Value] = lambda x: x,
            accumulator: ir.Type | None = None) -> ir.Value:
    """Folds `body` over the `reduced` loops of `domain` into a tensor of
    the kept dims, of type `accumulator` (f32 by default)."""
    sizes = _loop_sizes(domain, operands)
    init = _filled([s for d, s in enumerate(sizes) if d not in reduced], reduction.identity,
                   accumulator)
    return _generic(domain, operands, init, body, reduced, reduction.combine)


def _row_map(values: Sequence[ir.Value], body: Callable[..., ir.Value]) -> ir.Value:
    """An f32 elementwise step on row statistics of one shape."""
    return elementwise(TensorType(_shape(values[0]), "f32"), values, body)


# ---------------------------------------------------------------------------
# Elementwise ops.


# The scalar computation of elementwise ops defined without the scalar form
# (`nn.ElementwiseOp.scalar`), registered with `@scalar_body`: on f32
# scalars (i1 for booleans), `body(op, *scalars) -> scalar`.
SCALAR_BODIES: dict[type, Callable[..., ir.Value]] = {}


def _lower_elementwise(op: NN.Operation, *operands: ir.Value) -> ir.Value:
    """One generic whose body is the op's scalar definition, traced."""
    body = SCALAR_BODIES.get(type(op))
    if body is not None:
        return elementwise(op.result_type, operands, lambda *scalars: body(op, *scalars))
    tree = op.scalar_tree() if isinstance(op, nn.ElementwiseOp) else None
    if tree is None:
        raise PassFailure(f"no lowering to linalg for '{op.op_name()}': define its scalar "
                          "computation (`def scalar(self, x)`)", op.operation.location)
    return elementwise(op.result_type, operands,
                       lambda *scalars: scalar.to_mlir(tree, scalars))


def _lower_cast(op: nn.CastOp, x: ir.Value) -> ir.Value:
    result = op.result_type
    if x.type == result.to_mlir():
        return x
    source_unsigned = _is_integer(_element_type(x)) and _is_unsigned(x)
    if not source_unsigned and result.dtype not in UNSIGNED_TYPES:
        # Through f32, as the reference does: f16 -> bf16 rounds once.
        return elementwise(result, [x], lambda s: s)
    # Unsigned integers are read and made as the signless ones of their
    # bits (see the affine quantisation below): zero extension and the
    # unsigned conversions to and from floats where the sign matters.
    target = _signless(ir.Type.parse(result.dtype))

    def body(value):
        if source_unsigned and _is_integer(target) and ir.IntegerType(target).width > max(
                1, ir.IntegerType(value.type).width):
            return arith.extui(target, value)
        if source_unsigned and not _is_integer(target):
            wide = target if isinstance(target, (ir.F32Type, ir.F64Type)) else _f32()
            return arith.uitofp(wide, value)
        if result.dtype in UNSIGNED_TYPES and not _is_integer(value.type):
            return arith.fptoui(target, value)
        return _convert(value, target)

    made = elementwise(TensorType(result.shape, str(target)), [_retyped(x, _signless(x.type))],
                       body)
    return _retyped(made, result.to_mlir())


# ---------------------------------------------------------------------------
# Affine quantisation. ui8 tensors are stored as i8 tensors of the same bits
# (arith computes on signless integers only): a quantised operand is cast to
# its signless type where it is read and a result back to ui8 where it is
# made, with `builtin.unrealized_conversion_cast`s that `_store_unsigned_as_signless`
# removes once the function is lowered, by giving every ui8 value its i8 type.


def _signless(t: ir.Type) -> ir.Type:
    """`t` (a scalar or a tensor) with unsigned integers replaced by
    signless ones of the same width."""
    if isinstance(t, ir.RankedTensorType):
        shaped = ir.RankedTensorType(t)
        return _tensor_type(shaped.shape, _signless(shaped.element_type))
    if isinstance(t, ir.IntegerType) and ir.IntegerType(t).is_unsigned:
        return ir.IntegerType.get_signless(ir.IntegerType(t).width)
    return t


def _retyped(value: ir.Value, target: ir.Type) -> ir.Value:
    if value.type == target:
        return value
    return ir.Operation.create("builtin.unrealized_conversion_cast", results=[target],
                               operands=[value]).result


def _is_unsigned(value: ir.Value) -> bool:
    return ir.IntegerType(_element_type(value)).is_unsigned


def _to_integer(value: ir.Value, unsigned: bool, target: ir.Type) -> ir.Value:
    return arith.extui(target, value) if unsigned else arith.extsi(target, value)


def _channel_indexed(op: nn.AffineQuantizationOp, parameter: ir.Value,
                     domain: Shape) -> Indexed:
    """A scale or zero point read at the channel of every element (or the
    one value per tensor)."""
    axis = op.channel_axis(len(domain))
    return parameter, _dims(len(domain), [] if axis is None else [axis])


def _lower_quantize(op: nn.QuantizeOp, x: ir.Value, scale: ir.Value,
                    zero_point: ir.Value) -> ir.Value:
    result = op.result_type
    low, high = nn.quantized_range(result.dtype)
    unsigned = _is_unsigned(zero_point)
    i8, i32 = _signless(_element_type(zero_point)), ir.IntegerType.get_signless(32)
    zero_point = _retyped(zero_point, _signless(zero_point.type))

    def body(value, s, z):
        z = arith.sitofp(_f32(), _to_integer(z, unsigned, i32))
        shifted = arith.addf(math.roundeven(arith.divf(value, s)), z)
        # maxnumf turns NaN into the least value; minnumf leaves it there.
        saturated = arith.minnumf(arith.maxnumf(shifted, constant(low)), constant(high))
        return arith.trunci(i8, arith.fptosi(i32, saturated))

    quantized = elementwise(TensorType(result.shape, str(i8)),
                            [x, _channel_indexed(op, scale, result.shape),
                             _channel_indexed(op, zero_point, result.shape)], body)
    return _retyped(quantized, result.to_mlir())


def _lower_dequantize(op: nn.DequantizeOp, x: ir.Value, scale: ir.Value,
                      zero_point: ir.Value) -> ir.Value:
    result = op.result_type
    unsigned = _is_unsigned(x)
    i32 = ir.IntegerType.get_signless(32)
    x = _retyped(x, _signless(x.type))
    zero_point = _retyped(zero_point, _signless(zero_point.type))

    def body(value, s, z):
        difference = arith.subi(_to_integer(value, unsigned, i32), _to_integer(z, unsigned, i32))
        return arith.mulf(arith.sitofp(_f32(), difference), s)

    return elementwise(result, [x, _channel_indexed(op, scale, result.shape),
                                _channel_indexed(op, zero_point, result.shape)], body)


def _set_signless(value: ir.Value) -> None:
    signless = _signless(value.type)
    if signless != value.type:
        value.set_type(signless)


def _store_unsigned_as_signless(function: ir.Operation) -> None:
    """Gives every ui8 value of a lowered function (its arguments and
    results, constants, calls) its signless type, and removes the casts
    that have become identities. The bits are unchanged, so the function's
    callers (the NumPy boundary passes uint8 arrays) see no difference."""
    casts = []

    def retype(operation):
        for region in operation.regions:
            for block in region.blocks:
                for argument in block.arguments:
                    _set_signless(argument)
        for value in operation.results:
            _set_signless(value)
        if operation.name == "arith.constant" and "value" in operation.attributes:
            attribute = operation.attributes["value"]
            if isinstance(attribute, ir.DenseElementsAttr) and attribute.type != \
                    _signless(attribute.type):
                operation.attributes["value"] = _signless_elements(attribute)
        if operation.name == "builtin.unrealized_conversion_cast":
            casts.append(operation)
        return ir.WalkResult.ADVANCE

    function.walk(retype, ir.WalkOrder.PRE_ORDER)
    if function.name == "func.func":
        function_type = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)
        signless = ir.FunctionType.get([_signless(t) for t in function_type.inputs],
                                       [_signless(t) for t in function_type.results])
        if signless != function_type:
            function.attributes["function_type"] = ir.TypeAttr.get(signless)
    for cast in casts:
        if len(cast.operands) == 1 and cast.operands[0].type == cast.results[0].type:
            cast.results[0].replace_all_uses_with(cast.operands[0])
            cast.erase()


def _signless_elements(attribute: ir.DenseElementsAttr) -> ir.DenseElementsAttr:
    """An unsigned integer constant as the signless one of the same bits."""
    values = np.array(ir.DenseIntElementsAttr(attribute))
    signed = values.view(np.dtype(f"int{values.dtype.itemsize * 8}"))
    return ir.DenseElementsAttr.get(signed, type=ir.IntegerType.get_signless(
        values.dtype.itemsize * 8), shape=list(ir.RankedTensorType(attribute.type).shape))


# ---------------------------------------------------------------------------
# Contractions and windows.


def _lower_matmul(op: nn.MatmulOp, lhs: ir.Value, rhs: ir.Value) -> ir.Value:
    result = op.result_type
    lhs_type, rhs_type = op.operand_types
    (m, k), n = lhs_type.shape[-2:], rhs_type.shape[-1]
    # Float products accumulate in f32; integer ones in the result's type,
    # which linalg's named ops reach by sign-extending the operands
    # (their default cast is signed).
    accumulator = ir.Type.parse(result.dtype) if result.dtype in nn.INTEGER_ACCUMULATORS else None
    unsigned_lhs = lhs_type.dtype == "ui8"
    lhs = _retyped(lhs, _signless(lhs.type))
    if None in lhs_type.shape or None in rhs_type.shape:
        return _lower_dynamic_matmul(op, lhs, rhs, accumulator, unsigned_lhs)
    if prod(rhs_type.shape[:-2]) == 1:
        # One right-hand matrix for every batch (x @ W): the batches' rows
        # form a single matrix. Reshape propagation (linalg-fuse-elementwise-
        # ops) expands them back through the matmul into a generic with a
        # row dim per batch dim, which the contraction schedule still packs
        # as this matmul (lamina.schedules.analysis.contraction_dims); the
        # expanded form lets an epilogue on the batched result fuse with it.
        # The batch dims join the rows explicitly, unit ones included: a
        # reshape grouping a unit dim with K (197x1x768 as 197 x (1x768))
        # would make it, once expanded back, a unit reduction beside K,
        # which leaves the register tile's contraction two reductions and
        # no outer-product form.
        # The weight's unit batch dims are dropped by a rank-reducing slice,
        # not a reshape: a collapse can only group them with K, and
        # propagated back through the matmul they would be that unit
        # reduction again (1x197x768 @ 1x768x2304: 77 ms instead of 3).
        rows = prod(lhs_type.shape[:-1])
        operands = [_reshape(lhs, (rows, k), _row_groups(lhs_type.rank)), _matrix(rhs)]
        init = _filled((rows, n), 0.0, accumulator)
        product = (_unsigned_by_signed_product(*operands, init) if unsigned_lhs
                   else linalg.matmul(*operands, outs=[init]))
        return _narrow(_reshape(product, result.shape, _row_groups(len(result.shape))), result)
    else:
        batch = result.shape[:-2]
        operands = [_reshape(_broadcast(x, batch + _shape(x)[-2:]),
                             (prod(batch),) + _shape(x)[-2:]) for x in (lhs, rhs)]
        init = _filled((prod(batch), m, n), 0.0, accumulator)
        product = (_unsigned_by_signed_product(*operands, init) if unsigned_lhs
                   else linalg.batch_matmul(*operands, outs=[init]))
    return _narrow(_reshape(product, result.shape), result)


def _lower_dynamic_matmul(op: nn.MatmulOp, lhs: ir.Value, rhs: ir.Value,
                          accumulator: ir.Type | None, unsigned_lhs: bool) -> ir.Value:
    """The matmul of operands with '?' dims: as the static one, the rows
    of `x @ W` one matrix (a '?' row count), batched operands of one batch
    shape a `linalg.batch_matmul`; the contraction dims checked equal at
    run time where either is '?'."""
    result = op.result_type
    lhs_shape, rhs_shape = _shape(lhs), _shape(rhs)
    if None in (lhs_shape[-1], rhs_shape[-2]):
        _check_equal(tensor.dim(lhs, _index(len(lhs_shape) - 1)), _size(rhs, len(rhs_shape) - 2),
                     "the contraction dims of the operands (dim "
                     f"{len(lhs_shape) - 1} of the left, dim {len(rhs_shape) - 2} of the right) "
                     "must be equal")
    n = _size(rhs, len(rhs_shape) - 1)
    if all(d == 1 for d in rhs_shape[:-2]):
        rows = _static_prod(lhs_shape[:-1])
        matrix = _reshape(lhs, (rows, lhs_shape[-1]), _row_groups(len(lhs_shape)))
        operands = [matrix, _matrix(rhs)]
        init = _filled([_size(matrix, 0), n], 0.0, accumulator)
        product = (_unsigned_by_signed_product(*operands, init) if unsigned_lhs
                   else linalg.matmul(*operands, outs=[init]))
        sizes = _sizes(lhs)[:-1] + [n] if len(result.shape) > 2 else None
        return _narrow(_reshape(product, result.shape, _row_groups(len(result.shape)), sizes),
                       result)
    if lhs_shape[:-2] != rhs_shape[:-2] or None in result.shape[:-2] and (
            len(lhs_shape) != len(rhs_shape)):
        raise PassFailure(f"'{op.op_name()}' op with '?' dims has no lowering for batch dims "
                          "that broadcast (give both operands one batch shape)",
                          op.operation.location)
    batch = len(lhs_shape) - 2
    for dim in range(batch):
        if lhs_shape[dim] is None:
            _check_equal(tensor.dim(lhs, _index(dim)), _size(rhs, dim),
                         f"batch dim {dim} of the operands must be equal")
    groups = [list(range(batch)), [batch], [batch + 1]]
    operands = [_reshape(x, (_static_prod(_shape(x)[:-2]),) + _shape(x)[-2:], groups)
                for x in (lhs, rhs)]
    init = _filled([_size(operands[0], 0), _size(operands[0], 1), n], 0.0, accumulator)
    product = (_unsigned_by_signed_product(*operands, init) if unsigned_lhs
               else linalg.batch_matmul(*operands, outs=[init]))
    sizes = _sizes(lhs)[:-1] + [n]
    return _narrow(_reshape(product, result.shape, groups, sizes), result)


def _matrix(value: ir.Value) -> ir.Value:
    """The [..., K, N] tensor `value` whose batch dims are all 1 as the
    matrix [K, N], by a rank-reducing `tensor.extract_slice` of all of it
    (which reshape propagation leaves alone)."""
    shape = _shape(value)
    if len(shape) == 2:
        return value
    return tensor.extract_slice(_tensor_type(shape[-2:], _element_type(value)), value,
                                [], [], [], [0] * len(shape), list(shape), [1] * len(shape))


def _unsigned_by_signed_product(lhs: ir.Value, rhs: ir.Value, init: ir.Value) -> ir.Value:
    """`init + zext(lhs) x sext(rhs)` over matrices (or batches of them) as
    a generic: linalg's named matmuls extend both operands alike. It is the
    u8 x s8 body that the dot-product schedule puts on vpdpbusd."""
    rank = len(_shape(init)) + 1
    batch = list(range(rank - 3))
    m, n, k = rank - 3, rank - 2, rank - 1
    accumulator = _element_type(init)
    return _generic(_shape(init) + (_shape(lhs)[-1],),
                    [(lhs, _dims(rank, batch + [m, k])), (rhs, _dims(rank, batch + [k, n]))],
                    init, lambda a, b: arith.muli(arith.extui(accumulator, a),
                                                  arith.extsi(accumulator, b)),
                    reduced=[k], combine=lambda value, acc: arith.addi(acc, value), widen=False)


def _row_groups(rank: int) -> list[list[int]]:
    """The reassociation of a [..., K] tensor of `rank` dims with the
    matrix [rows, K]: every dim but the last a row."""
    return [list(range(rank - 1)), [rank - 1]]


def _permuted(value: ir.Value, permutation: Sequence[int]) -> ir.Value:
    sizes = _sizes(value)
    init = tensor.empty([sizes[d] for d in permutation], _element_type(value))
    return linalg.transpose(value, outs=[init], permutation=list(permutation)).results[0]


def _lower_conv2d(op: nn.Conv2dOp, x: ir.Value, weight: ir.Value,
                  bias: ir.Value | None) -> ir.Value:
    """A channels-last convolution is the NCHW one between transposes of
    its input and its result (the CPU's channels-last rewrite cancels them
    against its own); its bias is added in its layout."""
    result = op.result_type
    layout = nn.LAYOUTS[op.layout]
    if op.layout == "NHWC" and _depthwise(op, weight):
        return _lower_depthwise_nhwc(op, x, weight, bias)
    if op.layout != "NCHW":
        x = _permuted(x, [layout.index(d) for d in range(4)])
    nchw_shape = op.nchw_shape(result.shape)
    top, left, bottom, right = op.padding
    # Integer products accumulate in the result's type (linalg's named
    # convolutions sign-extend their operands).
    accumulator = ir.Type.parse(result.dtype) if result.dtype in nn.INTEGER_ACCUMULATORS else None
    unsigned_x = op.operand_types[0].dtype == "ui8"
    padding = 0.0
    if unsigned_x:
        x, padding = _unsigned_as_shifted(x), -UNSIGNED_SHIFT
    x = _pad(x, (0, 0, top, left), (0, 0, bottom, right), padding)
    n, channels, height, width = _shape(x)
    out_channels, group_channels, kh, kw = _shape(weight)
    groups = op.groups
    if groups == 1:
        acc = linalg.conv_2d_nchw_fchw(x, weight, outs=[_filled(nchw_shape, 0.0, accumulator)],
                                       strides=op.strides, dilations=op.dilations)
    else:
        # Groups become a dim of their own: input NGCHW, weights GFCHW.
        x = _reshape(x, (n, groups, channels // groups, height, width))
        grouped_weight = _reshape(weight, (groups, out_channels // groups, group_channels,
                                           kh, kw))
        grouped = (n, groups, out_channels // groups) + nchw_shape[2:]
        acc = linalg.conv_2d_ngchw_gfchw(x, grouped_weight,
                                         outs=[_filled(grouped, 0.0, accumulator)],
                                         strides=op.strides, dilations=op.dilations)
        acc = _reshape(acc, nchw_shape)
    if unsigned_x:
        acc = _unshifted(acc, weight)
    if op.layout != "NCHW":
        acc = _permuted(acc, layout)
    if bias is None:
        return _narrow(acc, result)
    return elementwise(result, [acc, (bias, _dims(4, [layout.index(1)]))], arith.addf)


# A ui8 x i8 convolution computes on the activations less UNSIGNED_SHIFT
# as i8 (their bits with the top one flipped), padded with -UNSIGNED_SHIFT
# (a ui8 zero), so that linalg's signed named convolutions, and the CPU's
# schedules of them, apply; UNSIGNED_SHIFT times each filter's sum is added
# back. Both are exact in wrapping i32.
UNSIGNED_SHIFT = 128


def _unsigned_as_shifted(x: ir.Value) -> ir.Value:
    i8 = ir.IntegerType.get_signless(8)
    x = _retyped(x, _signless(x.type))
    return elementwise(TensorType(_shape(x), "i8"), [x],
                       lambda v: arith.addi(v, constant(-UNSIGNED_SHIFT, i8)), widen=False)


def _unshifted(acc: ir.Value, weight: ir.Value) -> ir.Value:
    """`acc` (NCHW, i32) plus UNSIGNED_SHIFT times the sum of each output
    channel's filter."""
    i32 = _element_type(acc)
    out_channels = _shape(weight)[0]
    sums = _generic(_shape(weight), [weight], _filled((out_channels,), 0.0, i32),
                    lambda w: arith.muli(arith.extsi(i32, w), constant(UNSIGNED_SHIFT, i32)),
                    reduced=(1, 2, 3), combine=lambda value, total: arith.addi(total, value),
                    widen=False)
    return elementwise(TensorType(_shape(acc), "i32"), [acc, (sums, _dims(4, [1]))],
                       arith.addi, widen=False)


def _depthwise(op: nn.Conv2dOp, weight: ir.Value) -> bool:
    """Whether `op` has one filter per channel (groups = input channels =
    output channels) of a floating-point type."""
    out_channels, group_channels, _, _ = _shape(weight)
    return (op.groups > 1 and group_channels == 1 and out_channels == op.groups
            and not isinstance(_element_type(weight), ir.IntegerType))


def _lower_depthwise_nhwc(op: nn.Conv2dOp, x: ir.Value, weight: ir.Value,
                          bias: ir.Value | None) -> ir.Value:
    """A channels-last depthwise convolution as
    `linalg.depthwise_conv_2d_nhwc_hwc`: input and result NHWC (no
    transpose), the `[C, 1, KH, KW]` filter as `[KH, KW, C]`."""
    result = op.result_type
    top, left, bottom, right = op.padding
    x = _pad(x, (0, top, left, 0), (0, bottom, right, 0), 0.0)
    channels, _, kh, kw = _shape(weight)
    constant = defining_op(weight, "arith.constant")
    folded = constant and permuted_constant(constant.attributes["value"], (1, 2, 0),
                                            (channels, kh, kw))
    if folded is not None:
        hwc = arith.ConstantOp(folded.type, folded).result
    else:
        hwc = _permuted(_reshape(weight, (channels, kh, kw)), (1, 2, 0))
    acc = linalg.depthwise_conv_2d_nhwc_hwc(x, hwc, outs=[_filled(result.shape, 0.0)],
                                            strides=op.strides, dilations=op.dilations)
    if bias is None:
        return _narrow(acc, result)
    return elementwise(result, [acc, (bias, _dims(4, [3]))], arith.addf)


# The pooling ops of each layout: (max, sum).
_POOLING = {"NCHW": (linalg.pooling_nchw_max, linalg.pooling_nchw_sum),
            "NHWC": (linalg.pooling_nhwc_max, linalg.pooling_nhwc_sum)}


def _lower_pool2d(op: nn.Pool2dOp, x: ir.Value) -> ir.Value:
    result = op.result_type
    top, left, bottom, right = op.padding
    layout = nn.LAYOUTS[op.layout]
    low = [(0, 0, top, left)[d] for d in layout]
    high = [(0, 0, bottom, right)[d] for d in layout]
    pool_max, pool_sum = _POOLING[op.layout]
    # The window operand only carries the window's shape.
    window = tensor.empty(list(op.kernel), _f32())
    if isinstance(op, nn.MaxPool2dOp):
        # Padding is -inf so that it never wins; max is exact in any type.
        x = _pad(x, low, high, float("-inf"))
        init = _filled(result.shape, float("-inf"), _element_type(x))
        return pool_max(x, window, outs=[init], strides=op.strides, dilations=[1, 1])
    # Average pooling divides by the whole window: padding counts as zeros.
    x = _pad(x, low, high, 0.0)
    total = pool_sum(x, window, outs=[_filled(result.shape, 0.0)],
                     strides=op.strides, dilations=[1, 1])
    size = float(prod(op.kernel))
    return elementwise(result, [total], lambda s: arith.divf(s, constant(size)))


# ---------------------------------------------------------------------------
# Reductions and normalisations.


def _lower_reduction(op: nn.ReductionOp, x: ir.Value) -> ir.Value:
    """The fold and the finishing step of the op's scalar definition: an
    f32 accumulator, rounded once."""
    result = op.result_type
    domain = _shape(x)
    axes = op.normalized_axes(len(domain))
    step = scalar.trace(op.combine, 2)
    fold = _Reduction(op.identity, lambda value, acc: scalar.to_mlir(step, [acc, value]))
    # Integers accumulate in their own type.
    element = _element_type(x)
    total = _reduce(domain, axes, [x], fold, accumulator=element if _is_integer(element) else None)
    kept = TensorType(_kept(domain, axes), result.dtype)
    count = _static_prod([domain[a] for a in axes])
    if count is None:
        # The finishing step of a fold over '?' dims takes their count as a
        # value (f32, computed once outside the loops).
        finish = scalar.trace(lambda total, n: op.finish(total, n), 2)
        if finish.kind == "arg":
            value = _narrow(total, kept)
        else:
            elements = _row_count(x, axes)
            value = elementwise(kept, [total], lambda s: scalar.to_mlir(finish, [s, elements]))
        return _reshape(value, result.shape)
    finish = op.finish_tree(count)
    if finish.kind == "arg":
        value = _narrow(total, kept)
    else:
        value = elementwise(kept, [total], lambda s: scalar.to_mlir(finish, [s]))
    # keepdims: the reduced dims come back as size 1.
    return _reshape(value, result.shape)


def _row_count(x: ir.Value, dims: Sequence[int]) -> ir.Value:
    """The number of elements a row of `dims` of `x` holds, as an f32
    value: a constant, or computed from the '?' sizes."""
    count = _size_prod([_size(x, d) for d in dims])
    if isinstance(count, int):
        return constant(float(count))
    return arith.uitofp(_f32(), arith.index_cast(ir.IntegerType.get_signless(64), count))


def _lower_softmax(op: nn.SoftmaxOp | nn.LogSoftmaxOp, x: ir.Value) -> ir.Value:
    domain = _shape(x)
    rows = (op.axis % len(domain),)
    peak = _reduce(domain, rows, [x], _MAX)
    at_row = lambda value: _rows(value, domain, rows)
    total = _reduce(domain, rows, [x, at_row(peak)], _SUM,
                    lambda s, m: math.exp(arith.subf(s, m)))
    if isinstance(op, nn.LogSoftmaxOp):
        log_total = _row_map([total], math.log)
        return elementwise(op.result_type, [x, at_row(peak), at_row(log_total)],
                            lambda s, m, l: arith.subf(arith.subf(s, m), l))
    return elementwise(op.result_type, [x, at_row(peak), at_row(total)],
                        lambda s, m, t: arith.divf(math.exp(arith.subf(s, m)), t))


def _squared_deviation(x: ir.Value, mean: ir.Value) -> ir.Value:
    deviation = arith.subf(x, mean)
    return arith.mulf(deviation, deviation)


def _lower_layer_norm(op: nn.LayerNormOp, x: ir.Value, gamma: ir.Value,
                      beta: ir.Value) -> ir.Value:
    domain = _shape(x)
    dims = op.normalized_dims(TensorType(domain, "f32"))
    count = _row_count(x, dims)
    at_row = lambda value: _rows(value, domain, dims)
    # Two passes (mean, then squared deviations), as the reference does:
    # E[x^2] - E[x]^2 cancels catastrophically.
    mean = _row_map([_reduce(domain, dims, [x], _SUM)], lambda s: arith.divf(s, count))
    squares = _reduce(domain, dims, [x, at_row(mean)], _SUM, _squared_deviation)
    inv_std = _row_map([squares], lambda s: math.rsqrt(
        arith.addf(arith.divf(s, count), constant(op.epsilon))))
    param = _dims(len(domain), dims)
    return elementwise(
        op.result_type, [x, at_row(mean), at_row(inv_std), (gamma, param), (beta, param)],
        lambda s, m, r, g, b: arith.addf(arith.mulf(arith.mulf(arith.subf(s, m), r), g), b))


def _lower_rms_norm(op: nn.RmsNormOp, x: ir.Value, gamma: ir.Value) -> ir.Value:
    domain = _shape(x)
    dims = op.normalized_dims(TensorType(domain, "f32"))
    count = _row_count(x, dims)
    squares = _reduce(domain, dims, [x], _SUM, lambda s: arith.mulf(s, s))
    inv_rms = _row_map([squares], lambda s: math.rsqrt(
        arith.addf(arith.divf(s, count), constant(op.epsilon))))
    return elementwise(op.result_type,
                        [x, _rows(inv_rms, domain, dims), (gamma, _dims(len(domain), dims))],
                        lambda s, r, g: arith.mulf(arith.mulf(s, r), g))


def _masked_row_shift(peak: ir.Value) -> ir.Value:
    """The shift of a row's scores before `exp`: its maximum, or 0 for a
    row whose keys are all masked (maximum -inf), whose exponentials are
    then all 0 rather than NaN."""
    empty = arith.cmpf(arith.CmpFPredicate.OEQ, peak, constant(float("-inf")))
    return arith.select(empty, constant(0.0), peak)


def _masked_row_normalised(unnormalised: ir.Value, total: ir.Value) -> ir.Value:
    """`p v / sum(p)` of a row, 0 for a row whose keys are all masked (its
    sum and its product are 0)."""
    empty = arith.cmpf(arith.CmpFPredicate.OEQ, total, constant(0.0))
    return arith.divf(unnormalised, arith.select(empty, constant(1.0), total))


def _lower_attention(op: nn.AttentionOp, q: ir.Value, k: ir.Value, v: ir.Value,
                     mask: ir.Value | None) -> ir.Value:
    result = op.result_type
    *batch, sq, depth = _shape(q)
    sk, dv = _shape(v)[-2:]
    batch = tuple(batch)
    size = prod(batch)
    scale = op.scale if op.scale is not None else 1.0 / sqrt(depth)
    # Without a mask or causality and with a positive scale, the row
    # maximum of the raw scores is the scaled one's over the scale: the
    # scale is applied inside exp, and the scores get no pass of their own.
    scale_in_exp = mask is None and not op.causal and scale > 0

    # Scores q k^T: k is read transposed through the indexing map.
    b, i, j, c = (ir.AffineDimExpr.get(d) for d in range(4))
    transposed_b = [ir.AffineMap.get(4, 0, exprs) for exprs in ([b, i, c], [b, j, c], [b, i, j])]
    scores = linalg.batch_matmul(_reshape(q, (size, sq, depth)), _reshape(k, (size, sk, depth)),
                                 outs=[_filled((size, sq, sk), 0.0)], indexing_maps=transposed_b)
    domain = batch + (sq, sk)
    scores = _reshape(scores, domain)

    rank = len(domain)

    def logit(s: ir.Value, *additive: ir.Value) -> ir.Value:
        value = arith.mulf(s, constant(scale))
        for term in additive:
            value = arith.addf(value, term)
        if op.causal:
            # Key j is hidden from query i when j > i.
            hidden = arith.cmpi(arith.CmpIPredicate.ugt, linalg.IndexOp(rank - 1).result,
                                linalg.IndexOp(rank - 2).result)
            value = arith.select(hidden, constant(float("-inf")), value)
        return value

    logits = scores if scale_in_exp else elementwise(
        TensorType(domain, "f32"), [scores] + ([mask] if mask is not None else []), logit)
    rows = (rank - 1,)
    peak = _reduce(domain, rows, [logits], _MAX)
    def shifted(s: ir.Value, m: ir.Value) -> ir.Value:
        # Only a mask can hide every key of a row (causality leaves key 0).
        difference = arith.subf(s, m if mask is None else _masked_row_shift(m))
        return math.exp(arith.mulf(difference, constant(scale)) if scale_in_exp else difference)

    weights = elementwise(TensorType(domain, "f32"), [logits, _rows(peak, domain, rows)], shifted)
    total = _reduce(domain, rows, [weights], _SUM)
    # Normalising after the product with v divides Sq x Dv values instead
    # of Sq x Sk.
    unnormalised = linalg.batch_matmul(_reshape(weights, (size, sq, sk)),
                                       _reshape(v, (size, sk, dv)),
                                       outs=[_filled((size, sq, dv), 0.0)])
    out_domain = batch + (sq, dv)
    return elementwise(result, [_reshape(unnormalised, out_domain),
                                 _rows(total, out_domain, (len(out_domain) - 1,))],
                        arith.divf if mask is None else _masked_row_normalised)


# ---------------------------------------------------------------------------
# Flash-style attention.


@dataclass(frozen=True)
class AttentionTiles:
    """The tiles of the flash-style attention lowering: `queries` rows of
    q per tile (the rows of the register tile), `keys` keys per step of the
    online softmax (rounded to a multiple of `key_multiple`), the value
    columns padded to a multiple of `column_multiple`."""

    queries: int
    keys: int
    key_multiple: int = 32
    column_multiple: int = 16


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def _key_tile(keys: int, tiles: AttentionTiles) -> int:
    """Keys per step of the online softmax: `tiles.keys` (fewer if there
    are fewer keys), or a larger multiple of `tiles.key_multiple`, up to
    twice `tiles.keys`, where it pads the keys less: ViT's 197 keys take
    one step of 224 instead of two of 128 (59 padded keys, 23% of the
    products' work, and a step's rescaling)."""
    best = min(tiles.keys, _round_up(keys, tiles.key_multiple))
    for size in range(best, 2 * tiles.keys + 1, tiles.key_multiple):
        if _round_up(keys, size) < _round_up(keys, best):
            best = size
    return best


def _index(value: int) -> ir.Value:
    return arith.constant(ir.IndexType.get(), value)


_DYNAMIC = ir.ShapedType.get_dynamic_size()


def _tile_of(source: ir.Value, offsets: Sequence[ir.Value | int], sizes: Sequence[int],
             kept: int | None = None) -> ir.Value:
    """The slice of `source` at `offsets` (indices or values) of `sizes`,
    with only its last `kept` dims (the others have size 1)."""
    static = [o if isinstance(o, int) else _DYNAMIC for o in offsets]
    dynamic = [o for o in offsets if not isinstance(o, int)]
    result = _tensor_type(list(sizes)[-(kept or len(sizes)):], _element_type(source))
    return tensor.ExtractSliceOp(result, source, dynamic, [], [], static, list(sizes),
                                 [1] * len(sizes)).result


def _loops(rank: int, reduced: Sequence[int]) -> list:
    return [linalg.IteratorType.reduction if d in reduced else linalg.IteratorType.parallel
            for d in range(rank)]


def _tile_product(lhs: ir.Value, rhs: ir.Value, init: ir.Value) -> ir.Value:
    """`init[i, j] + sum_k lhs[i, k] * rhs[k, j]` as a multiply-add generic
    (what the schedule turns into a register tile of FMAs)."""
    maps = [_dims(3, [0, 2]), _dims(3, [2, 1]), _dims(3, [0, 1])]
    op = linalg.GenericOp([init.type], [lhs, rhs], [init], maps, _loops(3, [2]))
    block = op.regions[0].blocks.append(_element_type(lhs), _element_type(rhs), _f32())
    with ir.InsertionPoint(block):
        a, b, acc = block.arguments
        linalg.YieldOp([arith.addf(acc, arith.mulf(_widen(a), _widen(b)))])
    return op.result


def _running_maximum(peak: ir.Value, tile_peak: ir.Value,
                     shift: Callable[[ir.Value], ir.Value]) -> tuple[ir.Value, ir.Value]:
    """`m' = max(m, t)` written over `peak` and `exp(m - m')` over
    `tile_peak`, by one generic that reads both before writing."""
    identity = _dims(1, [0])
    op = linalg.GenericOp([peak.type, tile_peak.type], [], [peak, tile_peak],
                          [identity, identity], _loops(1, []))
    block = op.regions[0].blocks.append(_f32(), _f32())
    with ir.InsertionPoint(block):
        m, t = block.arguments
        new = arith.maximumf(m, t)
        linalg.YieldOp([new, math.exp(arith.subf(m, shift(new)))])
    return op.results[0], op.results[1]


def _mask_batch(head: ir.Value, batch: Shape, mask_batch: Shape) -> ir.Value | int:
    """The index into a mask's flattened batch dims (`mask_batch`, each the
    batch's or 1) of the flattened batch index `head`."""
    index: ir.Value | int = 0
    stride = 1
    for d in reversed(range(len(batch))):
        if mask_batch[d] != 1:
            inner = prod(batch[d + 1:])
            position = arith.remui(arith.divui(head, _index(inner)), _index(batch[d]))
            term = arith.muli(position, _index(stride))
            index = term if isinstance(index, int) else arith.addi(index, term)
        stride *= mask_batch[d]
    return index


def _lower_flash_attention(op: nn.AttentionOp, q: ir.Value, k: ir.Value, v: ir.Value,
                           mask: ir.Value | None, tiles: AttentionTiles) -> ir.Value:
    """Attention tile by tile, scores never materialised beyond one tile
    (what `attention-query-tile` asks for; the CPU pipeline does):
    a `scf.forall` over (batch x heads, query tiles) whose body runs the
    online softmax over key tiles in a `scf.for` carrying each row's running
    maximum, sum of exponentials and unnormalised output. Per key tile:
    `s = q k^T` (k scaled and transposed tile by tile beforehand, into
    `[BH, Sk/bk, D, bk]` f32), the mask, causality and padded keys as -inf,
    `m' = max(m, rowmax s)`, `p = exp(s - m')`, `l' = l exp(m - m') +
    rowsum p`, `acc' = acc exp(m - m') + p v`. Causal tiles stop at the
    diagonal, and the forall takes light and heavy query tiles in turn
    (one head, S=2048, 2 threads: 3.8 ms instead of 7.5 ms with the tiles
    in order, which left one thread three times the other's work). Sizes
    no tile divides are padded (queries, keys, value columns) and the
    padding is cut from the result.

    The loop body's ops are small and static, so the CPU schedule only
    vectorises them in place (`lamina.schedules.attention`): both products
    become 8 x 32 register tiles of FMAs looping over their reduction dim.
    Measured on the bench's attention (B=1 H=8 S=512 D=64, f32, AVX-512,
    2 threads, `bench/run.py` on the shared 2-core machine, load average
    about 2): 3.3 ms against XLA's 4.2-5.0 ms and NumPy's 12 ms; the
    whole-row lowering took 10.8 ms (XLA 5.4 ms in that run), and
    materialised 8 MB of scores. On one thread: 6.8 ms against XLA's
    12.0 ms. At load average 4 the two-thread times swing (Lamina 7-12
    ms, XLA 8-16 ms, either ahead): OpenMP's static halves of the forall
    wait for whichever thread the other processes delay. 8 queries x 128
    keys was the fastest tile measured (64 or 256 keys, 4 or 16 queries:
    2-20% slower); the products' FMA loops take 73% of the time, at the
    rate of Lamina's packed matmul on the same machine.

    Compiling it (parse to callable, first compile of the process) takes
    0.26-0.46 s depending on the load, from 1.0 s for the whole-row
    lowering, whose JIT alone took 0.6 s (XLA: 0.09-0.15 s). Of the ~0.25 s of a later compile,
    LLVM takes ~0.09 s (k's transposition, vectorised as gathers, is
    about 40% of the LLVM IR) and the verification after each Python pass
    (a walk of every op in Python) ~0.05 s."""
    result = op.result_type
    *batch, sq, depth = _shape(q)
    sk, dv = _shape(v)[-2:]
    if sk == 0:
        # No keys: every query's keys are all hidden, which gives 0.
        return _filled(result.shape, 0.0, ir.Type.parse(result.dtype))
    heads = prod(batch)
    scale = op.scale if op.scale is not None else 1.0 / sqrt(depth)
    if depth == 0:
        # Queries and keys with no features: every score is 0 (an empty
        # sum). One zero feature each gives the same scores, and tiles
        # with no dim of size 0.
        q, k = (_pad(x, (0,) * len(_shape(x)), (0,) * (len(_shape(x)) - 1) + (1,), 0.0)
                for x in (q, k))
        depth = 1
    bq = tiles.queries
    bk = _key_tile(sk, tiles)
    sq_pad, sk_pad = _round_up(sq, bq), _round_up(sk, bk)
    dv_pad = _round_up(dv, tiles.column_multiple)
    f32 = _f32()

    # k transposed by key tiles, in f32 and scaled (the one pass over it
    # that the transposition makes anyway); q as it is (widened inside the
    # product); all padded.
    queries = _pad(_reshape(q, (heads, sq, depth)), (0, 0, 0), (0, sq_pad - sq, 0), 0.0)
    keys = _pad(_reshape(k, (heads, sk, depth)), (0, 0, 0), (0, sk_pad - sk, 0), 0.0)
    keys = _reshape(keys, (heads, sk_pad // bk, bk, depth))
    packed = (heads, sk_pad // bk, depth, bk)
    keys = _generic(packed, [(keys, _dims(4, [0, 1, 3, 2]))], tensor.empty(list(packed), f32),
                    lambda x: arith.mulf(x, constant(scale)))
    values = _reshape(v, (heads, sk, dv))
    if _element_type(values) != f32:
        values = elementwise(TensorType((heads, sk, dv), "f32"), [values], lambda x: x)
    values = _pad(values, (0, 0, 0), (0, sk_pad - sk, dv_pad - dv), 0.0)
    # The mask keeps the dims it broadcasts along (one per batch dim, the
    # rows), as [mask batches, rows or 1, keys]: a padding mask
    # [B, 1, 1, Sk] is not copied out to [B x H, Sq, Sk].
    masks = None
    if mask is not None:
        shape = (1,) * (len(batch) + 2 - len(_shape(mask))) + _shape(mask)
        mask_batch, mask_rows = shape[:-2], shape[-2]
        masks = _reshape(mask, (prod(mask_batch), mask_rows, shape[-1]))
        masks = _broadcast(masks, (prod(mask_batch), mask_rows, sk))
        if _element_type(masks) != f32:
            masks = elementwise(TensorType(_shape(masks), "f32"), [masks], lambda x: x)
        masks = _pad(masks, (0, 0, 0), (0, sq_pad - sq if mask_rows != 1 else 0, sk_pad - sk),
                     0.0)

    out_type = ir.Type.parse(result.dtype)
    forall = scf.ForallOp([0, 0], [heads, sq_pad // bq], [1, 1],
                          [tensor.empty([heads, sq_pad, dv_pad], out_type)])
    with ir.InsertionPoint(forall.body):
        head, tile = forall.induction_variables
        if op.causal:
            # Query tile t sees t + 1 key tiles' worth of keys: iterations
            # alternate light and heavy tiles (0, n-1, 1, n-2, ...), so that
            # each thread's contiguous share of them has as much work.
            tiles = sq_pad // bq
            half = arith.divui(tile, _index(2))
            even = arith.cmpi(arith.CmpIPredicate.eq, arith.remui(tile, _index(2)), _index(0))
            tile = arith.select(even, half, arith.subi(_index(tiles - 1), half))
        row = arith.muli(tile, _index(bq))
        q_tile = _tile_of(queries, [head, row, 0], [1, bq, depth], 2)
        upper = _index(sk_pad)
        if op.causal:
            # Key tiles beyond the tile's last query are hidden whole.
            reached = arith.muli(arith.divui(arith.addi(row, _index(bq + bk - 1)), _index(bk)),
                                 _index(bk))
            upper = arith.minui(reached, upper)
        # Besides the running maximum, sum and output, the loop carries
        # the buffers of one tile's scores and of the rescaling factors:
        # every op of its body writes into one of its own operands, so
        # that the loop allocates nothing (bufferization keeps what a
        # loop yields in the buffers of its arguments).
        loop = scf.ForOp(_index(0), upper, _index(bk),
                         [_filled((bq,), float("-inf")), _filled((bq,), 0.0),
                          _filled((bq, dv_pad), 0.0), tensor.empty([bq, bk], f32),
                          tensor.empty([bq], f32)])
        row_map = _dims(2, [0])
        with ir.InsertionPoint(loop.body):
            key = loop.induction_variable
            peak, total, acc, scratch, factors = loop.inner_iter_args
            k_tile = _tile_of(keys, [head, arith.divui(key, _index(bk)), 0, 0],
                              [1, 1, depth, bk], 2)
            scores = _tile_product(q_tile, k_tile, linalg.fill(constant(0.0), outs=[scratch]))
            hidden_keys = op.causal or sk_pad != sk
            if masks is not None or hidden_keys:
                operands = []
                if masks is not None:
                    which = _mask_batch(head, tuple(batch), mask_batch)
                    if mask_rows == 1:
                        operands.append((_tile_of(masks, [which, 0, key], [1, 1, bk], 1),
                                         _dims(2, [1])))
                    else:
                        operands.append(_tile_of(masks, [which, row, key], [1, bq, bk], 2))

                def logit(added: ir.Value | None, s: ir.Value) -> ir.Value:
                    if added is not None:
                        s = arith.addf(s, added)
                    if not hidden_keys:
                        return s
                    j = arith.addi(linalg.IndexOp(1).result, key)
                    hidden = arith.cmpi(arith.CmpIPredicate.uge, j, _index(sk))
                    if op.causal:
                        i = arith.addi(linalg.IndexOp(0).result, row)
                        hidden = arith.ori(hidden, arith.cmpi(arith.CmpIPredicate.ugt, j, i))
                    return arith.select(hidden, constant(float("-inf")), s)

                scores = _generic((bq, bk), operands, scores,
                                  lambda *mask_value: mask_value[0] if mask_value else None,
                                  (), logit)

            def shift(m: ir.Value) -> ir.Value:
                # A row whose keys so far are all masked has maximum -inf:
                # its exponentials are taken from 0 (they are all 0).
                return m if masks is None else _masked_row_shift(m)

            # The tile's row maxima, then (one generic, both in place)
            # the new running maxima and the factor exp(m - m') rescaling
            # what was summed so far.
            tile_peak = _generic((bq, bk), [scores], linalg.fill(constant(float("-inf")),
                                                                 outs=[factors]),
                                 lambda s: s, (1,), arith.maximumf)
            weights = _generic((bq, bk), [(peak, row_map), (tile_peak, row_map)], scores,
                               lambda m, t: arith.maximumf(m, t), (),
                               lambda m, s: math.exp(arith.subf(s, shift(m))))
            new_peak, rescale = _running_maximum(peak, tile_peak, shift)
            scaled_total = _generic((bq,), [rescale], total, lambda r: r, (), arith.mulf)
            new_total = _generic((bq, bk), [weights], scaled_total, lambda p: p, (1,), arith.addf)
            v_tile = _tile_of(values, [head, key, 0], [1, bk, dv_pad], 2)
            scaled = _generic((bq, dv_pad), [(rescale, row_map)], acc, lambda r: r, (),
                              arith.mulf)
            scf.YieldOp([new_peak, new_total, _tile_product(weights, v_tile, scaled), weights,
                         rescale])
        _, final_total, final_acc, _, _ = loop.results
        # Written in place into the result's tile.
        destination = _tile_of(forall.inner_iter_args[0], [head, row, 0], [1, bq, dv_pad], 2)
        # A row whose keys are all masked sums to 0 and gives 0.
        normalised = _generic((bq, dv_pad), [final_acc, (final_total, row_map)], destination,
                              arith.divf if masks is None else _masked_row_normalised)
        with ir.InsertionPoint(forall.terminator().block):
            tensor.ParallelInsertSliceOp(normalised, forall.inner_iter_args[0], [head, row], [],
                                         [], [_DYNAMIC, _DYNAMIC, 0], [1, bq, dv_pad],
                                         [1, 1, 1])
    out = forall.results[0]
    if (sq_pad, dv_pad) != (sq, dv):
        out = _tile_of(out, [0, 0, 0], [heads, sq, dv])
    return _reshape(out, result.shape)


# ---------------------------------------------------------------------------
# Fusion groups.

# The attribute that marks a call of a fusion group's body with its kind.
FUSION_KIND = nn.FUSION_KIND_ATTRIBUTE


def _lower_fused(op: nn.FusedOp, inputs: list[ir.Value]) -> list[ir.Value]:
    call = func.CallOp([t.to_mlir() for t in op.result_types], op.body, inputs)
    call.attributes[FUSION_KIND] = ir.StringAttr.get(op.kind)
    return list(call.results)


# ---------------------------------------------------------------------------
# Data movement.


def _lower_transpose(op: nn.TransposeOp, x: ir.Value) -> ir.Value:
    return _permuted(x, op.perm)


def _lower_reshape(op: nn.ReshapeOp, x: ir.Value) -> ir.Value:
    return _reshape(x, op.result_type.shape)


def _lower_broadcast_to(op: nn.BroadcastToOp, x: ir.Value) -> ir.Value:
    return _broadcast(x, op.result_type.shape)


def _lower_concat(op: nn.ConcatOp, inputs: list[ir.Value]) -> ir.Value:
    result = op.result_type
    axis = op.axis % result.rank
    # An empty piece adds nothing, and bufferization would insert it at an
    # offset past the end of the result (upstream rejects that) when it is last.
    # (An empty result is an empty tensor before any lowering runs.)
    inputs = [x for x in inputs if _shape(x)[axis]]
    if len(inputs) == 1:
        return inputs[0]
    return tensor.concat(result.to_mlir(), axis, inputs)


def _lower_slice(op: nn.SliceOp, x: ir.Value) -> ir.Value:
    # An empty slice (one starting at the end of a dim, whose offset
    # upstream's extract_slice rejects) is an empty tensor before any
    # lowering runs.
    result = op.result_type
    return tensor.extract_slice(result.to_mlir(), x, [], [], [], list(op.starts),
                                list(result.shape), list(op.step(result.rank)))


def _lower_pad(op: nn.PadOp, x: ir.Value) -> ir.Value:
    if op.result_type.dtype != "ui8":
        return _pad(x, op.low, op.high, op.value)
    # A ui8 fill as the signless byte of the same bits.
    value = int(op.value) - 256 if op.value > 127 else op.value
    padded = _pad(_retyped(x, _signless(x.type)), op.low, op.high, value)
    return _retyped(padded, op.result_type.to_mlir())


def _lower_gather(op: nn.GatherOp, x: ir.Value, indices: ir.Value) -> ir.Value:
    """A generic over the result reading the indices at the loops that
    replace the axis and extracting the element of `x` they name, the
    index clamped into the axis (as the reference does)."""
    result = op.result_type
    axis = op.axis % len(_shape(x))
    count = len(_shape(indices))
    last = _shape(x)[axis] - 1

    def extract(index: ir.Value) -> ir.Value:
        clamped = arith.minsi(arith.maxsi(index, constant(0, index.type)),
                              constant(last, index.type))
        loops = [linalg.IndexOp(d).result for d in range(result.rank)]
        position = arith.index_cast(ir.IndexType.get(), clamped)
        return tensor.extract(x, loops[:axis] + [position] + loops[axis + count:])

    init = tensor.empty(list(result.shape), _element_type(x))
    return _generic(result.shape, [(indices, _dims(result.rank, range(axis, axis + count)))],
                    init, extract, widen=False)


def _loop_index(dim: int) -> ir.Value:
    """The index of loop `dim` of the enclosing generic, as an i64."""
    return arith.index_cast(ir.IntegerType.get_signless(64), linalg.IndexOp(dim).result)


def _lower_iota(op: nn.IotaOp) -> ir.Value:
    result = op.result_type
    return elementwise(result, [], lambda: _loop_index(op.axis % result.rank))


def _add(value: ir.Value, acc: ir.Value) -> ir.Value:
    return arith.addi(value, acc) if _is_integer(value.type) else arith.addf(value, acc)


def _lower_cumsum(op: nn.CumsumOp, x: ir.Value) -> ir.Value:
    """Loops over the result and a reduction loop `j` along the axis:
    element `i` folds `x[..., j]` for `j <= i`."""
    result = op.result_type
    rank = result.rank
    axis = op.axis % rank
    domain = result.shape + (result.shape[axis],)
    along = _dims(rank + 1, [rank if d == axis else d for d in range(rank)])
    element = _element_type(x)
    accumulator = element if _is_integer(element) else _f32()

    def term(value: ir.Value) -> ir.Value:
        reached = arith.cmpi(arith.CmpIPredicate.ule, linalg.IndexOp(rank).result,
                             linalg.IndexOp(axis).result)
        return arith.select(reached, value, constant(0, value.type))

    total = _generic(domain, [(x, along)], _filled(result.shape, 0, accumulator), term,
                     (rank,), _add)
    return _narrow(total, result)


def _lower_argmax(op: nn.ArgmaxOp, x: ir.Value) -> ir.Value:
    """The maximum of each row, then the least index whose element is it
    (or is NaN: the maximum is NaN where a row holds one)."""
    domain = _shape(x)
    axis = op.axis % len(domain)
    element = _element_type(x)
    integer = _is_integer(element)
    peak = _reduce(domain, (axis,), [x], _Reduction(
        float("-inf"), arith.maxsi if integer else arith.maximumf),
        accumulator=element if integer else None)
    i64 = ir.IntegerType.get_signless(64)
    count = constant(domain[axis], i64)

    def position(value: ir.Value, maximum: ir.Value) -> ir.Value:
        if integer:
            found = arith.cmpi(arith.CmpIPredicate.eq, value, maximum)
        else:
            found = arith.ori(arith.cmpf(arith.CmpFPredicate.OEQ, value, maximum),
                              arith.cmpf(arith.CmpFPredicate.UNO, value, value))
        return arith.select(found, _loop_index(axis), count)

    init = _filled(_kept(domain, (axis,)), domain[axis], i64)
    first = _generic(domain, [x, _rows(peak, domain, (axis,))], init, position, (axis,),
                     arith.minsi)
    return _reshape(first, op.result_type.shape)


# By op category (base class) where the category shares a lowering; the
# most derived class listed wins. They join the class-keyed registry of
# the conversion (`lamina.lowering.registry`), as a plugin's lowerings do.
TO_LINALG = registry("linalg")
_BUILTIN: dict[type, Callable[..., Any]] = {
    nn.UnaryElementwiseOp: _lower_elementwise,
    nn.BinaryElementwiseOp: _lower_elementwise,
    nn.SelectOp: _lower_elementwise,
    nn.CastOp: _lower_cast,
    nn.MatmulOp: _lower_matmul,
    nn.Conv2dOp: _lower_conv2d,
    nn.Pool2dOp: _lower_pool2d,
    nn.ReductionOp: _lower_reduction,
    nn.SoftmaxOp: _lower_softmax,
    nn.LogSoftmaxOp: _lower_softmax,
    nn.LayerNormOp: _lower_layer_norm,
    nn.RmsNormOp: _lower_rms_norm,
    nn.AttentionOp: _lower_attention,
    nn.TransposeOp: _lower_transpose,
    nn.ReshapeOp: _lower_reshape,
    nn.BroadcastToOp: _lower_broadcast_to,
    nn.ConcatOp: _lower_concat,
    nn.SliceOp: _lower_slice,
    nn.PadOp: _lower_pad,
    nn.GatherOp: _lower_gather,
    nn.IotaOp: _lower_iota,
    nn.CumsumOp: _lower_cumsum,
    nn.ArgmaxOp: _lower_argmax,
    nn.QuantizeOp: _lower_quantize,
    nn.DequantizeOp: _lower_dequantize,
    nn.FusedOp: _lower_fused,
}
for _op_class, _function in _BUILTIN.items():
    TO_LINALG.register(_op_class, _function)


# ---------------------------------------------------------------------------
# Registration: how ops defined outside this file (a user's, a plugin's, in
# any dialect) join the conversion.


def lowering(op_class: type[Op]):
    """Registers the decorated function as the lowering of `op_class` (and
    of its subclasses without one of their own):

        @nn_to_linalg.lowering(MyOp)
        def lower_my_op(op, x, y):        # op: the op's view; x, y: operands
            return nn_to_linalg.elementwise(op.result_type, [x, y], arith.addf)

    The function runs with the insertion point before the op and its
    location current; it gets the operands grouped like the declarations
    (a list for a variadic one, None for an absent optional one) and
    returns the replacement value, or a list of them for several results.
    The same as `lamina.lowering.registry.lowering(op_class)`."""
    return registry_lowering(op_class, to="linalg")


def scalar_body(op_class: type[Op]):
    """Registers the scalar computation of an elementwise nn op (a subclass
    of `nn.UnaryElementwiseOp` or `nn.BinaryElementwiseOp`):

        @nn_to_linalg.scalar_body(HardSigmoidOp)
        def hard_sigmoid(op, x):          # x: an f32 scalar
            return arith.minimumf(arith.maximumf(..., constant(0.0)), constant(1.0))

    The op then lowers like the built-in elementwise ops: one broadcasting
    `linalg.generic`, f16/bf16 computed in f32 and rounded once."""
    if not issubclass(op_class, (nn.UnaryElementwiseOp, nn.BinaryElementwiseOp)):
        raise TypeError(f"{op_class.__name__} is not an elementwise nn op; register its whole "
                        "lowering with @nn_to_linalg.lowering")

    def register(function):
        SCALAR_BODIES[op_class] = function
        return function
    return register


def lowering_for(op_class: type[Op]) -> Callable[..., Any] | None:
    """The lowering of an op class: its own or its nearest base class's."""
    return TO_LINALG.lookup(op_class)


def lower_op(operation: ir.Operation,
             lowering: Callable[..., Any] | None = None) -> None:
    """Replaces one op by its lowering (`lowering` instead of the
    registered one, if given)."""
    op_class = lookup_op(operation.name)
    lowering = lowering or lowering_for(op_class)
    if lowering is None:
        raise PassFailure(f"no lowering to linalg for '{operation.name}': register one with "
                          "@nn_to_linalg.lowering", operation.location)
    try:
        view = op_class.from_operation(operation)
    except VerifyError as error:
        raise PassFailure(f"'{operation.name}' op {error}", operation.location) from None
    operands = [view.operand(decl.name) for decl in view.operand_decls]
    with operation.context, operation.location, ir.InsertionPoint(operation):
        values = _empty_results(operation)
        if values is None:
            _LOWERING.append(operation)
            try:
                values = lowering(view, *operands)
            finally:
                _LOWERING.pop()
    if isinstance(values, ir.Value):
        values = [values]
    values = list(values)
    if len(values) != len(operation.results):
        raise PassFailure(f"the lowering of '{operation.name}' gave {len(values)} value(s) for "
                          f"{len(operation.results)} result(s)", operation.location)
    for result, value in zip(operation.results, values):
        result.replace_all_uses_with(value)
    operation.erase()


def _empty_results_type(operation: ir.Operation) -> bool:
    """Whether the op's results are all tensors with a dim of 0."""
    types = [result.type for result in operation.results]
    return bool(types) and all(isinstance(t, ir.RankedTensorType) and 0 in t.shape
                               for t in types)


def _empty_results(operation: ir.Operation) -> list[ir.Value] | None:
    """Empty tensors for an op whose results all have a dim of 0: they hold
    no element, so nothing is computed (upstream's slices of such operands
    would have offsets past the end, which its verifier rejects). None when
    a result has elements."""
    if not _empty_results_type(operation):
        return None
    return [tensor.empty(list(r.type.shape), r.type.element_type) for r in operation.results]


def _converted(operation: ir.Operation) -> bool:
    """Every nn op is converted (a missing lowering is an error); ops of
    other dialects are converted where they have a lowering."""
    op_class = lookup_op(operation.name)
    if op_class is None:
        return False
    return op_class.dialect is NN or lowering_for(op_class) is not None


@register_pass
@dataclass
class ConvertNNToLinalg(Pass):
    """Lowers every nn op to linalg, tensor, arith and math.

    Ops of other dialects with a registered lowering are converted too.
    Named linalg ops for contractions, convolutions, pooling, transposes and
    broadcasts; linalg.generic for broadcasting elementwise ops, reductions
    and the fused bodies of softmax, normalisations and attention; tensor ops
    for reshapes, slices, padding and concatenation. f16 and bf16 are
    computed in f32 and rounded once, as the nn references do. nn.fused
    becomes a call of its body, marked with lamina.fusion_kind. With
    attention-query-tile, attention lowers flash-style: query tiles in a
    scf.forall, an online softmax over key tiles in a scf.for.
    """

    argument = "convert-nn-to-linalg"
    anchor = "func.func"
    attention_query_tile: int = field(default=0, metadata={"minimum": 0})
    """Queries per tile of the flash-style attention lowering; 0: attention
    lowers to whole rows of scores."""
    attention_key_tile: int = field(default=128, metadata={"minimum": 1})
    """Keys per step of the flash-style attention's online softmax (rounded
    up to a multiple of 32)."""

    def run(self, op: ir.Operation) -> None:
        found = []

        def collect(operation):
            if _converted(operation):
                found.append(operation)
            return ir.WalkResult.ADVANCE

        op.walk(collect, ir.WalkOrder.POST_ORDER)
        flash = None
        if self.attention_query_tile:
            tiles = AttentionTiles(self.attention_query_tile,
                                   _round_up(self.attention_key_tile, 32))
            flash = lambda view, *operands: _lower_flash_attention(view, *operands, tiles)
        # Empty results first: their operands may be left unused, and an nn
        # op (a fusion group's call too) whose results nothing uses is
        # erased rather than lowered into computation that later passes
        # would only partly remove.
        empty = [_empty_results_type(o) for o in found]
        for operation in [o for o, e in zip(found, empty) if e]:
            lower_op(operation)
        found = [o for o, e in zip(found, empty) if not e]
        live = []
        for operation in reversed(found):
            unused = not any(list(result.uses) for result in operation.results)
            if unused and operation.results and lookup_op(operation.name).dialect is NN:
                operation.erase()
            else:
                live.append(operation)
        for operation in reversed(live):
            is_attention = flash and issubclass(lookup_op(operation.name), nn.AttentionOp)
            lower_op(operation, flash if is_attention else None)
        with op.location:
            _store_unsigned_as_signless(op)
