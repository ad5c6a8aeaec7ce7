"""Convolutions. Dense ones channels last: before schedules are chosen, each
`linalg.conv_2d_nchw_fchw` on static shapes becomes a
`linalg.conv_2d_nhwc_hwcf` between transposes (input NCHW -> NHWC,
filter FCHW -> HWCF, result NHWC -> NCHW), which the cost model schedules
as a direct convolution (`convolution_schedule` in the cost model):

* threads share the output rows (or the batch);
* the register tile is 8 output pixels of a row x 32 output channels (two
  AVX-512 vectors): the 16 accumulators stay in registers while the loops
  over filter rows and input channels run, and each step broadcasts 8
  input pixels and multiplies them with one filter row of 32 output
  channels, loaded contiguously from the HWCF filter;
* upstream does the rest: `transform.structured.decompose` turns each
  register tile (one output row, one filter row) into a 1-D convolution,
  which `transform.structured.vectorize` unrolls over the filter's width
  into `vector.contract`s, the CPU's FMAs of outer products. A row that
  no tile of 5 to 8 pixels divides is split (`transform.structured.split`)
  into 8-pixel tiles and one tile of the rest (17 pixels: 91 -> 156
  GFLOP/s); channel counts get the largest tile that divides them.

Upstream has no transform that changes a convolution's layout (IREE's
channels-last conversion is its own pass), so the rewrite is Lamina's:
transposes built with the linalg builders. A constant filter is
transposed at compile time (with NumPy; bf16, which NumPy cannot hold,
at each call). A constant padding of the input moves after its
transpose, in destination-passing style: the transpose writes the
interior of a filled NHWC allocation (in place once bufferized). A
zero-filled result gets a fill of the NHWC shape, which each thread runs
on its rows inside the convolution's loop. The convolution, its fill and
the result's transpose keep the convolution's fusion group, so a bias,
an activation or a residual add fused with it stays in its group and
reads the result's transpose in its own loop nest; the transposes of the
input and the filter are data movement of their own, vectorised and
split over threads along their input's outermost dim.

Why not img2col. The previous schedule rewrote the convolution with
upstream's `convert_conv2d_to_img2col` into a gather of input windows
(`[N, C*KH*KW, OH*OW]`) and a contraction packed like a matmul's. On the
bench's conv2d (3x3, 64 -> 64 channels, 56x56, f32, 2 threads, on this
2-core machine shared with other work) the gather (7 MB, scalar loops on
one thread, its floordiv/mod indexing map defeating upstream's tiling)
took 0.6-0.7 ms, and packing the gathered matrix into 32-pixel panels
copied the 7 MB again before the contraction (1.4 ms with the packing,
measured as a 64x576x3136 matmul). The direct convolution reads the input
where it lies: its inner loop is 48 FMAs, 10 broadcasts and 6 loads per
input channel and filter row, and runs at the speed of the packed matmul
and of OpenBLAS on this machine (110 GFLOP/s on one core; OpenBLAS's
matmul measured 97 at the same time). Of the bench's 1.07 ms, the
convolution itself takes 1.01 ms; the transposes and fills around it
0.05 ms; the only temporaries are the NHWC copies (under 1 MB each).

Measured with `bench/run.py --threads 2 --systems lamina,numpy,jax
--workloads conv2d`, before and after in alternation, 4 runs each (load
average 1.0-1.5): Lamina 1.07-1.18 ms, 196-215 GFLOP/s (img2col:
2.03-2.95 ms), XLA 2.57-3.01 ms, NumPy 4.96-7.26 ms: 2.2-2.75x the best
peer; compile 212-255 ms (img2col: 192-271; XLA 120-176). Inductor, in a
run under a load of 2: 13.9 ms, against 2.78 ms. A 3x3 convolution of
7x7 pixels and 512 channels (resnet18's last stage): 2.0 ms, as with
img2col (1.9), once the filter's transpose streamed its rows (it took
2.75 ms of the first 4.1). torchvision's resnet18 at 224x224 (2 threads,
in alternation): 24.1-24.2 ms, from 38.1-39.2 ms with img2col; its
compile takes 7.4-7.7 s instead of 6.1-6.3 (more, smaller loop nests).

A 1x1 convolution of stride 1 on an unpadded input is a matrix product
in NCHW as it is: out[n, f, p] += w[f, c] * x[n, c, p] over the pixels p
of each image. It becomes that contraction (a `linalg.generic` on the
collapsed tensors; the filter, shared by the images, lacks their batch
dim), which the packed-panel schedule of matmuls runs, with no
transposes (MobileNet's 1x1 convolution of 144 -> 24 channels on 56x56
pixels: 2.03 -> 0.16 ms on two threads).

Grouped and depthwise convolutions (`linalg.conv_2d_ngchw_gfchw`) have
too little arithmetic per byte to pay for transposes (a depthwise 3x3
filter: 9 FMAs per output element), and upstream vectorises no grouped
convolution and, in NCHW, no depthwise one. Each becomes one elementwise
`linalg.generic` over the output (n, g, f, oh, ow): its inputs are, per
filter tap (c, kh, kw), the input window that tap meets (a strided slice
of the NCHW input: channel c of every group, rows and columns offset by
the tap) and the tap's weights ([G, F, 1]), and its body sums their
products onto the init in the convolution's order, contracted into FMAs.
Every map is then a projection, so the loop-nest schedule splits the
output's rows over threads and vectorises along them (the NCHW layout's
contiguous dim), with a bias and an activation fused into the same loop.
A group of more taps than `MAX_TAPS` (64: 8 channels of a 3x3 filter)
keeps its channels as a reduction loop inside the output's vectors. A
constant padding becomes an allocation filled with the padding value
and a scheduled copy into its interior (bufferized, `tensor.pad` would
be a fill and a copy on one thread); windows that lie inside the input
read it where it is. No slice drops a dim: upstream's bufferization
cannot always tell which of several unit dims a rank-reducing slice
dropped, and aborts.
"""

from __future__ import annotations

from math import prod
from typing import Callable

import numpy as np
from mlir import ir
from mlir.dialects import arith, bufferization, linalg, tensor

from lamina.scalar import cast_float
from lamina.schedules.analysis import FUSION_GROUP, FUSION_KIND

CONVOLUTIONS = ("linalg.conv_2d_nchw_fchw",)

# Permutations of the rewrite: NCHW -> NHWC, FCHW -> HWCF, NHWC -> NCHW.
_TO_NHWC = (0, 2, 3, 1)
_TO_HWCF = (2, 3, 1, 0)
_TO_NCHW = (0, 3, 1, 2)


def _static(op: ir.Operation) -> bool:
    return all(isinstance(v.type, ir.RankedTensorType) and v.type.has_static_shape
               for v in list(op.operands) + list(op.results))


def _transposed(value: ir.Value, permutation: tuple[int, ...]) -> ir.Operation:
    shape = ir.RankedTensorType(value.type).shape
    element = ir.RankedTensorType(value.type).element_type
    init = tensor.empty([shape[p] for p in permutation], element)
    return linalg.transpose(value, outs=[init], permutation=list(permutation)).operation


def _refilled(fill: ir.Operation, shape: list[int]) -> ir.Operation:
    """A fill of `fill`'s value over a new tensor of `shape`."""
    element = ir.RankedTensorType(fill.results[0].type).element_type
    return linalg.fill(fill.operands[0], outs=[tensor.empty(shape, element)]).owner.operation


def _channels_last_init(init: ir.Value) -> ir.Operation:
    """The NHWC init of the rewritten convolution: a fill of the same value
    where the NCHW one is a fill, else its transpose."""
    owner = _defining_op(init, "linalg.fill")
    if owner is not None:
        shape = ir.RankedTensorType(init.type).shape
        return _refilled(owner, [shape[p] for p in _TO_NHWC])
    return _transposed(init, _TO_NHWC)


def _channels_last_filter(weight: ir.Value) -> ir.Value:
    """`weight` (FCHW) as HWCF: a constant filter is transposed now, once,
    instead of at every call."""
    constant = _defining_op(weight, "arith.constant")
    folded = _transposed_constant(constant.attributes["value"]) if constant else None
    if folded is None:
        return _transposed(weight, _TO_HWCF).results[0]
    return arith.ConstantOp(folded.type, folded).result


def _transposed_constant(value: ir.Attribute) -> ir.Attribute | None:
    """A dense filter constant transposed to HWCF, or None where NumPy
    cannot hold its elements (bf16)."""
    try:
        dense = ir.DenseElementsAttr(value)
    except ValueError:
        return None
    shape = ir.RankedTensorType(dense.type)
    element = shape.element_type
    transposed_type = ir.RankedTensorType.get([shape.shape[p] for p in _TO_HWCF], element)
    if dense.is_splat:
        return ir.DenseElementsAttr.get_splat(transposed_type, dense.get_splat_value())
    try:
        array = np.array(dense)
    except (TypeError, ValueError, RuntimeError):
        return None
    if array.shape != tuple(shape.shape) or array.dtype.kind != "f":
        return None
    return ir.DenseElementsAttr.get(np.ascontiguousarray(array.transpose(_TO_HWCF)),
                                    type=element)


def _constant_padding(value: ir.Value) -> tuple[ir.Operation, ir.Attribute] | None:
    """The `tensor.pad` defining `value` and its padding constant, when it
    pads with a constant by static amounts."""
    pad = _defining_op(value, "tensor.pad")
    if pad is None or len(pad.operands) != 1:
        return None
    padding = pad.regions[0].blocks[0].operations[0].operation
    if padding.name != "tensor.yield":
        return None
    constant = _defining_op(padding.operands[0], "arith.constant")
    return (pad, constant.attributes["value"]) if constant is not None else None


def _channels_last_input(x: ir.Value) -> ir.Value:
    """`x` (NCHW) as NHWC. A constant padding of `x` moves after the
    transpose in destination-passing style: the transpose writes the
    interior of a filled NHWC tensor (in place once bufferized,
    `_written_into_padding`) instead of the padded tensor being built,
    then transposed."""
    padding = _constant_padding(x)
    if padding is None:
        return _transposed(x, _TO_NHWC).results[0]
    pad, value = padding
    source = pad.operands[0]
    low = [ir.DenseI64ArrayAttr(pad.attributes["static_low"])[p] for p in _TO_NHWC]
    x_type = ir.RankedTensorType(x.type)
    padded_type = ir.RankedTensorType.get([x_type.shape[p] for p in _TO_NHWC],
                                          x_type.element_type)
    interior_shape = [ir.RankedTensorType(source.type).shape[p] for p in _TO_NHWC]
    return _written_into_padding(
        padded_type, value, low, interior_shape,
        lambda interior: linalg.transpose(source, outs=[interior],
                                          permutation=list(_TO_NHWC)).results[0])


def _written_into_padding(padded_type: ir.RankedTensorType, value: ir.Attribute,
                          low: list[int], interior_shape: list[int],
                          write: Callable[[ir.Value], ir.Value]) -> ir.Value:
    """A padded tensor of `padded_type` built in destination-passing style: a new
    allocation (`bufferization.alloc_tensor`, not a `tensor.empty`: the
    fills of tensors of the same shape would be alike, merged by CSE, then
    copied for each) filled with `value`, and its interior at `low` written
    by the op `write` makes with the interior slice as its destination."""
    allocation = bufferization.AllocTensorOp(padded_type, [])
    filled = linalg.fill(arith.constant(padded_type.element_type, value),
                         outs=[allocation.result])
    written = write(_slice(filled, low, interior_shape))
    return tensor.insert_slice(written, filled, **_slice_attributes(low, interior_shape))


def _defining_op(value: ir.Value, name: str) -> ir.Operation | None:
    owner = value.owner
    if isinstance(owner, ir.OpView):
        owner = owner.operation
    return owner if isinstance(owner, ir.Operation) and owner.name == name else None


def _group_of(op: ir.Operation) -> dict[str, ir.Attribute]:
    """The fusion group attributes of `op`."""
    return {key: op.attributes[key] for key in (FUSION_GROUP, FUSION_KIND)
            if key in op.attributes}


def _mark(ops: list[ir.Operation], group: dict[str, ir.Attribute]) -> None:
    for new in ops:
        for key, value in group.items():
            new.attributes[key] = value


def _rewrite(op: ir.Operation) -> None:
    x, weight, init = op.operands
    group = _group_of(op)
    padding = _constant_padding(x)
    with ir.InsertionPoint(op), op.location:
        x_nhwc = _channels_last_input(x)
        weight_hwcf = _channels_last_filter(weight)
        init_nhwc = _channels_last_init(init)
        convolution = linalg.conv_2d_nhwc_hwcf(
            x_nhwc, weight_hwcf, outs=[init_nhwc.results[0]],
            strides=op.attributes["strides"], dilations=op.attributes["dilations"]).owner.operation
        result = _transposed(convolution.results[0], _TO_NCHW)
    _mark([init_nhwc, convolution, result], group)
    op.results[0].replace_all_uses_with(result.results[0])
    old_fill = _defining_op(init, "linalg.fill")
    op.erase()
    weight_constant = _defining_op(weight, "arith.constant")
    for unused in (old_fill, padding[0] if padding else None, weight_constant):
        if unused is not None and not list(unused.results[0].uses):
            unused.erase()


def _pointwise(op: ir.Operation) -> bool:
    """A 1x1 convolution of stride 1 over an unpadded input."""
    if op.name != "linalg.conv_2d_nchw_fchw" or not _static(op):
        return False
    x, weight, _ = op.operands
    kh, kw = ir.RankedTensorType(weight.type).shape[2:]
    strides = _int_array(op.attributes["strides"])
    return (kh, kw) == (1, 1) and strides == [1, 1] and _constant_padding(x) is None


def _pointwise_as_contraction(op: ir.Operation) -> None:
    """A 1x1 convolution as the matrix product it is in NCHW:
    out[n, f, p] += w[f, c] * x[n, c, p] over the pixels p of each image,
    a contraction the packed-panel schedule runs (the filter shared by the
    images, a batch dim it does not have), with no transposes."""
    x, weight, init = op.operands
    n, _, height, width = ir.RankedTensorType(x.type).shape
    features = ir.RankedTensorType(weight.type).shape[0]
    element = ir.RankedTensorType(init.type).element_type
    # Loops (n, f, p, c); an image alone has no batch loop.
    batch = n > 1
    rank = 4 if batch else 3
    *image, f, p, c = [ir.AffineDimExpr.get(i) for i in range(rank)]
    maps = [ir.AffineMap.get(rank, 0, [f, c]), ir.AffineMap.get(rank, 0, image + [c, p]),
            ir.AffineMap.get(rank, 0, image + [f, p])]
    image_dims = [[0], [1], [2, 3]] if batch else [[0, 1], [2, 3]]
    group = _group_of(op)
    with ir.InsertionPoint(op), op.location:
        images = _collapsed(x, image_dims)
        filters = _collapsed(weight, [[0], [1, 2, 3]])
        fill = _defining_op(init, "linalg.fill")
        if fill is not None:
            refilled = _refilled(fill, [n] * batch + [features, height * width])
            _mark([refilled], group)
            accumulator = refilled.results[0]
        else:
            accumulator = _collapsed(init, image_dims)
        parallel, reduction = linalg.IteratorType.parallel, linalg.IteratorType.reduction
        product = linalg.GenericOp([accumulator.type], [filters, images], [accumulator], maps,
                                   [parallel] * (rank - 1) + [reduction])
        block = product.regions[0].blocks.append(
            ir.RankedTensorType(weight.type).element_type,
            ir.RankedTensorType(x.type).element_type, element)
        with ir.InsertionPoint(block):
            w_value, x_value, acc = block.arguments
            # The filter is the product's left operand, as in a matmul's
            # body: the register tile's contraction then lowers to the
            # same outer products of FMAs.
            linalg.YieldOp([arith.addf(acc, arith.mulf(cast_float(w_value, element),
                                                       cast_float(x_value, element)))])
        result = tensor.expand_shape(init.type, product.result, image_dims, [],
                                     ir.RankedTensorType(init.type).shape)
    _mark([product.operation], group)
    op.results[0].replace_all_uses_with(result)
    op.erase()
    if fill is not None and not list(fill.results[0].uses):
        fill.erase()


def convolutions_to_channels_last(module: ir.Operation) -> int:
    """Rewrites the module's static NCHW convolutions into channels-last
    ones between transposes, 1x1 ones of stride 1 into contractions
    (`_pointwise_as_contraction`); returns how many."""
    found: list[ir.Operation] = []

    def collect(child):
        if child.name in CONVOLUTIONS and _static(child):
            found.append(child)
        return ir.WalkResult.ADVANCE

    module.walk(collect, ir.WalkOrder.PRE_ORDER)
    for op in found:
        if _pointwise(op):
            _pointwise_as_contraction(op)
        else:
            _rewrite(op)
    return len(found)


# ---------------------------------------------------------------------------
# Grouped convolutions.

GROUPED = "linalg.conv_2d_ngchw_gfchw"
# Taps of a filter beyond which a grouped convolution is left as it is (a
# generic of twice as many operands).
MAX_TAPS = 64


def _int_array(attribute: ir.Attribute) -> list[int]:
    return [int(v) for v in ir.DenseIntElementsAttr(attribute)]


def _grouped_as_taps(op: ir.Operation) -> ir.Operation:
    """`linalg.conv_2d_ngchw_gfchw` as an elementwise sum over the filter's
    taps: for each filter position (c, kh, kw), the input window it meets
    (a strided slice of the input, [N, G, OH, OW]) times its filter
    weights ([G, F, 1]), summed in the convolution's order (c, kh, then
    kw) onto the init, products and sums contracted into FMAs. Every
    indexing map is then a projection, and the loop-nest schedule
    vectorises the sum along the output's rows, the NCHW layout's
    contiguous dim, with no transposes (a depthwise convolution has too
    little arithmetic per byte to pay for them). Groups of more taps than
    `MAX_TAPS` keep their channels as a reduction loop (C) inside the
    output's vectors, each channel's taps summed before they are added to
    the accumulator."""
    x, weight, init = op.operands
    n, groups, channels, _, _ = ir.RankedTensorType(x.type).shape
    _, per_group, _, kh, kw = ir.RankedTensorType(weight.type).shape
    oh, ow = ir.RankedTensorType(init.type).shape[3:]
    sh, sw = _int_array(op.attributes["strides"])
    dh, dw = _int_array(op.attributes["dilations"])
    x_element = ir.RankedTensorType(x.type).element_type
    w_element = ir.RankedTensorType(weight.type).element_type
    out_element = ir.RankedTensorType(init.type).element_type
    reduce = channels * kh * kw > MAX_TAPS
    # Loops (n, g, f, oh, ow[, c]). No slice is rank-reducing: upstream's
    # bufferization cannot always tell which of several unit dims (a
    # group's one channel, a row of one pixel) such a slice dropped, and
    # aborts. Unrolled, channel c of every group is the strided channel
    # slice c, c + C, c + 2C, ... of the NCHW input, and each tap's weights
    # a [G, F, 1] slice of the filter with its taps flattened.
    rank = 6 if reduce else 5
    d = [ir.AffineDimExpr.get(i) for i in range(rank)]
    zero = ir.AffineConstantExpr.get(0)
    out_map = ir.AffineMap.get(rank, 0, d[:5])
    if reduce:
        x_map = ir.AffineMap.get(rank, 0, [d[0], d[1], d[5], d[3], d[4]])
        w_map = ir.AffineMap.get(rank, 0, [d[1], d[2], d[5], zero])
        taps = [(0, i, j) for i in range(kh) for j in range(kw)]
    else:
        x_map = ir.AffineMap.get(rank, 0, [d[0], d[1], d[3], d[4]])
        w_map = ir.AffineMap.get(rank, 0, [d[1], d[2], zero])
        taps = [(c, i, j) for c in range(channels) for i in range(kh) for j in range(kw)]
    # The stride of a dim of one element is no stride.
    row_strides = [sh if oh > 1 else 1, sw if ow > 1 else 1]
    with ir.InsertionPoint(op), op.location:
        padded, source, (top, left) = _padded_in_place(x)
        height, width = ir.RankedTensorType(source.type).shape[3:]
        if not reduce:
            # Channel c of every group: a strided channel slice of NCHW.
            padded, source = (_collapsed(v, [[0], [1, 2], [3], [4]]) for v in (padded, source))

        def window(offsets: list[int], sizes: list[int], strides: list[int]) -> ir.Value:
            """A tap's window, read from the unpadded input where it lies
            inside it (the window that is the padded input's interior
            would otherwise fold into the copy that fills it, which
            bufferization then copies once more)."""
            row, column = offsets[-2:]
            inside = (top <= row and row + (oh - 1) * strides[-2] < top + height
                      and left <= column and column + (ow - 1) * strides[-1] < left + width)
            value = source if inside else padded
            if inside:
                offsets = offsets[:-2] + [row - top, column - left]
            return _slice(value, offsets, sizes, strides)

        if reduce:
            w = _collapsed(weight, [[0], [1], [2], [3, 4]])
            windows = [window([0, 0, 0, i * dh, j * dw], [n, groups, channels, oh, ow],
                              [1, 1, 1] + row_strides) for _, i, j in taps]
            weights = [_slice(w, [0, 0, 0, i * kw + j], [groups, per_group, channels, 1])
                       for _, i, j in taps]
        else:
            w = _collapsed(weight, [[0], [1], [2, 3, 4]])
            windows = [window([0, c, i * dh, j * dw], [n, groups, oh, ow],
                              [1, channels if groups > 1 else 1] + row_strides)
                       for c, i, j in taps]
            weights = [_slice(w, [0, 0, (c * kh + i) * kw + j], [groups, per_group, 1])
                       for c, i, j in taps]
        iterators = [linalg.IteratorType.parallel] * 5 + (
            [linalg.IteratorType.reduction] if reduce else [])
        generic = linalg.GenericOp(
            [init.type], windows + weights, [init],
            [x_map] * len(taps) + [w_map] * len(taps) + [out_map], iterators)
        block = generic.regions[0].blocks.append(
            *([x_element] * len(taps) + [w_element] * len(taps) + [out_element]))
        arguments = list(block.arguments)
        with ir.InsertionPoint(block):
            # Each product and sum may contract into one FMA (rounded once,
            # not twice), as the vector.contract of a dense convolution does.
            # The reduction over C adds one sum per channel to the
            # accumulator: upstream vectorises a reduction whose
            # accumulator meets one combining op.
            contract = ir.Attribute.parse("#arith.fastmath<contract>")
            total = None if reduce else arguments[-1]
            for pixel, weight_value in zip(arguments[:len(taps)], arguments[len(taps):-1]):
                product = arith.mulf(cast_float(pixel, out_element),
                                     cast_float(weight_value, out_element), fastmath=contract)
                total = product if total is None else arith.addf(total, product, fastmath=contract)
            if reduce:
                total = arith.addf(arguments[-1], total, fastmath=contract)
            linalg.YieldOp([total])
    _mark([generic.operation], _group_of(op))
    op.results[0].replace_all_uses_with(generic.results[0])
    op.erase()
    return generic.operation


def _padded_in_place(x: ir.Value) -> tuple[ir.Value, ir.Value, tuple[int, int]]:
    """(padded, source, (top, left)): `x`, the grouped input, with a
    constant padding of it (or of the NCHW tensor it expands) rewritten in
    destination-passing style (a new allocation filled with the padding
    value, the input copied into its interior by a `linalg.copy` that the
    schedules split over threads and vectorise; bufferized, `tensor.pad`
    is a fill and a copy on one thread), the unpadded input in the shape
    of `x`, and the padding before its rows and columns."""
    expand = _defining_op(x, "tensor.expand_shape")
    padding = _constant_padding(expand.operands[0] if expand else x)
    if padding is None or not _spatial(padding[0]):
        return x, x, (0, 0)
    pad, value = padding
    source = pad.operands[0]
    element = ir.RankedTensorType(source.type).element_type
    low = list(ir.DenseI64ArrayAttr(pad.attributes["static_low"]))
    interior_shape = ir.RankedTensorType(source.type).shape
    padded = _written_into_padding(ir.RankedTensorType(pad.results[0].type), value, low,
                                   interior_shape,
                                   lambda interior: linalg.copy(source, outs=[interior]))
    if expand is None:
        return padded, source, (low[-2], low[-1])
    reassociation = ir.ArrayAttr(expand.attributes["reassociation"])
    groups = [[int(ir.IntegerAttr(i).value) for i in ir.ArrayAttr(g)] for g in reassociation]
    x_shape = ir.RankedTensorType(x.type).shape
    unpadded_shape = x_shape[:3] + interior_shape[2:]
    unpadded = tensor.expand_shape(ir.RankedTensorType.get(unpadded_shape, element), source,
                                   groups, [], unpadded_shape)
    return (tensor.expand_shape(x.type, padded, groups, [], x_shape), unpadded,
            (low[-2], low[-1]))


def _spatial(pad: ir.Operation) -> bool:
    """Whether `pad` pads the rows and columns (the last two dims) only."""
    sides = [list(ir.DenseI64ArrayAttr(pad.attributes[key])) for key in ("static_low",
                                                                         "static_high")]
    return not any(amount for side in sides for amount in side[:-2])


def _slice_attributes(offsets: list[int], sizes: list[int],
                      strides: list[int] | None = None) -> dict:
    return dict(offsets=[], sizes=[], strides=[], static_offsets=offsets, static_sizes=sizes,
                static_strides=strides or [1] * len(sizes))


def _slice(value: ir.Value, offsets: list[int], sizes: list[int],
           strides: list[int] | None = None) -> ir.Value:
    """A slice of `value` of the same rank."""
    element = ir.RankedTensorType(value.type).element_type
    return tensor.extract_slice(ir.RankedTensorType.get(sizes, element), value,
                                **_slice_attributes(offsets, sizes, strides))


def _collapsed(value: ir.Value, groups: list[list[int]]) -> ir.Value:
    """`value` with each group of its consecutive dims collapsed into one."""
    source = ir.RankedTensorType(value.type)
    shape = [prod(source.shape[d] for d in group) for group in groups]
    result = ir.RankedTensorType.get(shape, source.element_type)
    return tensor.collapse_shape(result, value, groups)


def _taps_apply(op: ir.Operation) -> bool:
    if op.name != GROUPED or not _static(op):
        return False
    shapes = [ir.RankedTensorType(v.type) for v in op.operands]
    if not all(isinstance(s.element_type, ir.FloatType) for s in shapes):
        return False
    kh, kw = shapes[1].shape[3:]
    return kh * kw <= MAX_TAPS


def grouped_convolutions_to_taps(module: ir.Operation) -> int:
    """Rewrites the module's static grouped convolutions into sums over
    their filters' taps (`_grouped_as_taps`); returns how many."""
    found: list[ir.Operation] = []

    def collect(child):
        if _taps_apply(child):
            found.append(child)
        return ir.WalkResult.ADVANCE

    module.walk(collect, ir.WalkOrder.PRE_ORDER)
    for op in found:
        _grouped_as_taps(op)
    return len(found)
