"""--cpu-split-padded-convolutions: a channels-last depthwise convolution
of a padded input, with its epilogue, becomes an interior part that reads
the input where it lies and border parts that pad only the rows and
columns they read.

A `linalg.depthwise_conv_2d_nhwc_hwc` of a `tensor.pad` of its input
reads a padded copy of the whole input, which bufferizes to a fill of a
new tensor and a copy of the input into it: two passes over memory for a
convolution of 9 FMAs per output element, up to half its time. Only the
first and last output rows and columns (those whose windows meet the
padding) need padded values. This pass splits the convolution's output
into up to five parts: the top and bottom rows whose windows meet the
padding (over the whole width), and between them the left and right
columns whose windows do, and the interior. The interior is a
convolution of a slice of the unpadded input (no copy); each border part
convolves a `tensor.pad` of the slice of the input it reads (a few rows
or columns, padded by static amounts). The chain of elementwise ops over
the convolution's result (its epilogue: a bias, an activation) and the
zero fill that initialises it are split with it, each part computing its
own fill, convolution and epilogue on its slice of the result, and the
parts are inserted into the epilogue's destination. Each part is thus a
convolution with an epilogue of its own, which `cpu-schedule` tiles into
register tiles with the epilogue computed on each tile.

`tile-pixels` (the register tile's output pixels, 0: none) shapes the
parts for the schedule's tiles: the left and right parts are at least
half a tile wide (a border column alone would be computed one pixel at a
time, its loads unshared), and an interior row that no tile of more than
half of `tile-pixels` divides is cut to a multiple of `tile-pixels`, the
columns beyond it joining the right part. A convolution whose border
parts would hold more than 40% of its outputs (3x3 on 7x7 or, with tiles
of 8 pixels, 14x14 pixels) is left as it is: their loops would cost more
than the copy they save. Filters of more than `max-taps` taps (7x7) are
left as they are too: their arithmetic outweighs the copy.

Expects linalg on tensors. Guarantees: every static floating-point
depthwise convolution of at most `max-taps` taps whose input is a
constant `tensor.pad` of its rows and columns, whose windows meet the
padding and whose border parts hold at most 40% of its outputs, is split
into parts of the same computation; the parts' ops carry the
convolution's fusion group; other convolutions are left as they are.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mlir import ir
from mlir.dialects import tensor

from lamina.linalg_builders import (constant_padding, defining_op, fusion_marks, int_array, mark,
                                    same_rank_slice, slice_attributes, static_shapes)
from lamina.pass_registry import Pass, register_pass
from lamina.schedules.op_tiling import largest_divisor

DEPTHWISE = "linalg.depthwise_conv_2d_nhwc_hwc"

# A band of output positions along one dim: [start, stop).
Band = tuple[int, int]

# The largest share of the output in border parts for which a convolution
# is split: beyond it (a 3x3 filter on 7x7 pixels: 49%; on 14x14 with
# borders of half a tile: 63%) the parts' loops cost more than the padded
# copy they save.
MAX_BORDER = 0.4


@dataclass(frozen=True)
class Window:
    """A convolution's window along one dim: the input's size, the padding
    before it, the filter's size, the stride, the dilation and the
    output's size."""

    size: int
    low: int
    kernel: int
    stride: int
    dilation: int
    out: int

    def bands(self) -> tuple[Band, Band, Band]:
        """The outputs whose windows meet the padding before the input,
        those whose windows lie inside it, and those whose windows meet
        the padding after it."""
        first = min(self.out, -(-self.low // self.stride))
        inside_last = (self.size - 1 + self.low - (self.kernel - 1) * self.dilation) // self.stride
        last = max(first, min(self.out, inside_last + 1))
        return (0, first), (first, last), (last, self.out)

    def reads(self, band: Band) -> tuple[int, int, int, int]:
        """(offset, size, low, high): the slice of the input that the
        outputs of `band` read, and the padding before and after it that
        their windows meet."""
        start = band[0] * self.stride - self.low
        stop = (band[1] - 1) * self.stride + (self.kernel - 1) * self.dilation + 1 - self.low
        offset, end = max(start, 0), min(stop, self.size)
        return offset, end - offset, offset - start, stop - end


def column_bands(bands: tuple[Band, Band, Band], tile_pixels: int) -> tuple[Band, Band, Band]:
    """The left, interior and right columns of the rows between the top
    and bottom parts, from the columns' `bands`: with `tile_pixels`, a
    left and right border part of at least half a tile (a border column
    alone would be computed one pixel at a time) where that leaves half a
    tile between them, and the interior cut to a multiple of `tile_pixels`
    when no tile of more than half of `tile_pixels` pixels divides it, the
    rest joining the right part."""
    _, (start, stop), (_, end) = bands
    if tile_pixels:
        least = tile_pixels // 2
        wide_start = max(start, least) if start else start
        wide_stop = min(stop, end - least) if stop < end else stop
        if wide_stop - wide_start >= least:
            start, stop = wide_start, wide_stop
        width = stop - start
        if width > tile_pixels and largest_divisor(width, tile_pixels) <= least:
            stop = start + width - width % tile_pixels
    return (0, start), (start, stop), (stop, end)


def parts(rows: Window, columns: Window, tile_pixels: int = 0) -> list[tuple[Band, Band]] | None:
    """The (rows, columns) of the output's parts, in the order the pass
    emits them (top, left, interior, right, bottom), or None when no
    window meets the padding or the border parts are more than
    `MAX_BORDER` of the output (the convolution is too small to pay for
    them)."""
    top, middle, bottom = rows.bands()
    left, interior, right = column_bands(columns.bands(), tile_pixels)
    inside = (middle[1] - middle[0]) * (interior[1] - interior[0])
    border = 1 - inside / (rows.out * columns.out)
    if border > MAX_BORDER or border == 0:
        return None
    found = [(top, (0, columns.out)), (middle, left), (middle, interior), (middle, right),
             (bottom, (0, columns.out))]
    return [(r, c) for r, c in found if r[0] < r[1] and c[0] < c[1]]


def _elementwise_user(value: ir.Value, shape: list[int]) -> ir.Operation | None:
    """The only user of `value` when it is an elementwise `linalg.generic`
    of the same shape that reads `value` in place and writes its result in
    place (the next op of an epilogue), else None."""
    uses = list(value.uses)
    if len(uses) != 1:
        return None
    user = uses[0].owner
    user = user.operation if isinstance(user, ir.OpView) else user
    if user.name != "linalg.generic" or len(user.results) != 1 or not static_shapes(user):
        return None
    if user.parent != value.owner.parent:
        return None
    if ir.RankedTensorType(user.results[0].type).shape != shape:
        return None
    if any(str(t) != "#linalg.iterator_type<parallel>"
           for t in ir.ArrayAttr(user.attributes["iterator_types"])):
        return None
    maps = _maps(user)
    identity = ir.AffineMap.get_identity(len(shape))
    if uses[0].operand_number >= len(user.operands) - 1:
        return None
    if maps[-1] != identity or maps[uses[0].operand_number] != identity:
        return None
    if not all(_projection(m) for m in maps):
        return None
    return user


def _maps(op: ir.Operation) -> list[ir.AffineMap]:
    return [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]


def _rebuilt(op: ir.Operation, operands: list[ir.Value], result: ir.Type,
             attributes: dict[str, ir.Attribute] | None = None) -> ir.Operation:
    """A copy of `op` (its attributes and region) on `operands`, of one
    result of type `result`, at the current insertion point."""
    copy = op.clone(ip=False)
    merged = {name: op.attributes[name] for name in op.attributes}
    merged.update(attributes or {})
    new = ir.Operation.create(op.name, results=[result], operands=operands,
                              attributes=merged, regions=len(op.regions), loc=op.location)
    for source, target in zip(copy.regions, new.regions):
        for block in list(source.blocks):
            block.append_to(target)
    copy.erase()
    return new


def _sliced(value: ir.Value, indexing: ir.AffineMap, offsets: list[int],
            sizes: list[int]) -> ir.Value:
    """The slice of `value`, an operand read through the projection
    `indexing`, that the loops' slice at `offsets` of `sizes` reads."""
    shape = ir.RankedTensorType(value.type).shape
    value_offsets, value_sizes = [], []
    for position, expr in enumerate(indexing.results):
        if isinstance(expr, ir.AffineDimExpr) and shape[position] != 1:
            dim = ir.AffineDimExpr(expr).position
            value_offsets.append(offsets[dim])
            value_sizes.append(sizes[dim])
        else:
            value_offsets.append(0)
            value_sizes.append(shape[position])
    if value_sizes == list(shape):
        return value
    return same_rank_slice(value, value_offsets, value_sizes)


def _projection(indexing: ir.AffineMap) -> bool:
    return all(isinstance(e, ir.AffineDimExpr) or isinstance(e, ir.AffineConstantExpr)
               for e in indexing.results)


def split_convolution(convolution: ir.Operation, tile_pixels: int) -> bool:
    """Splits `convolution`, its fill and its epilogue into parts (see the
    module docstring); False when it does not apply."""
    x_padded, weight, init = convolution.operands
    padding = constant_padding(x_padded)
    if padding is None:
        return False
    pad, value = padding
    low = list(ir.DenseI64ArrayAttr(pad.attributes["static_low"]))
    high = list(ir.DenseI64ArrayAttr(pad.attributes["static_high"]))
    if low[0] or low[3] or high[0] or high[3]:
        return False
    x = pad.operands[0]
    n, height, width, channels = ir.RankedTensorType(x.type).shape
    kh, kw, _ = ir.RankedTensorType(weight.type).shape
    out_shape = ir.RankedTensorType(init.type).shape
    sh, sw = int_array(convolution.attributes["strides"])
    dh, dw = int_array(convolution.attributes["dilations"])
    rows = Window(height, low[1], kh, sh, dh, out_shape[1])
    columns = Window(width, low[2], kw, sw, dw, out_shape[2])
    regions = parts(rows, columns, tile_pixels)
    # A part whose windows meet nothing but padding (more padding than
    # filter) is left to the padded convolution.
    if regions is None or any(rows.reads(r)[1] < 1 or columns.reads(c)[1] < 1
                              for r, c in regions):
        return False
    epilogue = []
    last = convolution
    while (user := _elementwise_user(last.results[0], out_shape)) is not None:
        if fusion_marks(user) != fusion_marks(convolution):
            break
        epilogue.append(user)
        last = user
    fill = defining_op(init, "linalg.fill")
    if fill is not None and sum(1 for _ in fill.results[0].uses) != 1:
        fill = None
    marks = fusion_marks(convolution)
    element = ir.RankedTensorType(x.type).element_type
    made: list[ir.Operation] = []

    def keep(new: ir.Value | ir.Operation) -> ir.Value:
        op = new.owner if isinstance(new, ir.Value) else new
        op = op.operation if isinstance(op, ir.OpView) else op
        made.append(op)
        return op.results[0]

    with ir.InsertionPoint.after(last), convolution.location:
        destination = last.operands[len(last.operands) - 1]
        for (r0, r1), (c0, c1) in regions:
            shape = [n, r1 - r0, c1 - c0, channels]
            offsets = [0, r0, c0, 0]
            part_type = ir.RankedTensorType.get(shape, ir.RankedTensorType(init.type).element_type)
            row_offset, row_size, top, bottom = rows.reads((r0, r1))
            column_offset, column_size, left, right = columns.reads((c0, c1))
            window = keep(same_rank_slice(x, [0, row_offset, column_offset, 0],
                                          [n, row_size, column_size, channels]))
            if top or bottom or left or right:
                padded = ir.RankedTensorType.get(
                    [n, row_size + top + bottom, column_size + left + right, channels], element)
                window = keep(_rebuilt(pad, [window], padded, {
                    "static_low": ir.DenseI64ArrayAttr.get([0, top, left, 0]),
                    "static_high": ir.DenseI64ArrayAttr.get([0, bottom, right, 0])}))
            if fill is not None:
                empty = keep(tensor.empty(shape, part_type.element_type))
                part_init = keep(_rebuilt(fill, [fill.operands[0], empty], part_type))
            else:
                part_init = keep(same_rank_slice(init, offsets, shape))
            result = keep(_rebuilt(convolution, [window, weight, part_init], part_type))
            chained = convolution.results[0]
            for op in epilogue:
                operands = []
                maps = _maps(op)
                for index, operand in enumerate(op.operands):
                    if operand == chained:
                        operands.append(result)
                    elif op is last and index == len(op.operands) - 1:
                        operands.append(keep(same_rank_slice(destination, offsets, shape)))
                    elif (index == len(op.operands) - 1
                          and defining_op(operand, "tensor.empty") is not None):
                        operands.append(keep(tensor.empty(
                            shape, ir.RankedTensorType(operand.type).element_type)))
                    else:
                        sliced = _sliced(operand, maps[index], offsets, shape)
                        operands.append(keep(sliced) if sliced != operand else operand)
                result_type = ir.RankedTensorType.get(
                    shape, ir.RankedTensorType(op.results[0].type).element_type)
                result = keep(_rebuilt(op, operands, result_type))
                chained = op.results[0]
            destination = keep(tensor.insert_slice(result, destination,
                                                   **slice_attributes(offsets, shape)))
    mark(made, marks)
    last.results[0].replace_all_uses_with(destination)
    for op in reversed(epilogue):
        op.erase()
    convolution.erase()
    for op in (fill, pad):
        if op is not None and not any(True for _ in op.results[0].uses):
            op.erase()
    return True


@register_pass
@dataclass
class CPUSplitPaddedConvolutions(Pass):
    """Splits padded depthwise convolutions, with their epilogues, into an interior part that reads the input in place and border parts that pad only what they read."""

    argument = "cpu-split-padded-convolutions"
    verifies_lamina_ops = False  # no op of Lamina's dialects at its stage
    max_taps: int = field(default=9, metadata={"minimum": 1})
    """Filters of more taps (rows x columns) are left as they are: the padded copy is a smaller share of their work than the border parts cost."""
    tile_pixels: int = field(default=0, metadata={"minimum": 0})
    """The register tile's output pixels: the left and right parts are at least half as wide, and an interior row that no tile of more than half as many divides is cut to a multiple of it (0: the parts are the padding's bands)."""

    def applies(self, op: ir.Operation) -> bool:
        if op.name != DEPTHWISE or not static_shapes(op):
            return False
        kh, kw, _ = ir.RankedTensorType(op.operands[1].type).shape
        if kh * kw > self.max_taps:
            return False
        return all(isinstance(ir.RankedTensorType(v.type).element_type, ir.FloatType)
                   for v in op.operands)

    def run(self, op: ir.Operation) -> None:
        for function in op.regions[0].blocks[0].operations:
            function = function.operation
            if function.name != "func.func" or not function.regions[0].blocks:
                continue
            for child in list(function.regions[0].blocks[0].operations):
                child = child.operation
                if self.applies(child):
                    split_convolution(child, self.tile_pixels)
