"""Building blocks of Lamina's rewrites of linalg and tensor IR: finding
the op that defines a value, slices and reshapes of static tensors, fills
over new shapes, a constant padding rewritten in destination-passing
style, and the fusion-group marks that rewritten ops keep.

Each builder emits at the current insertion point and location.
"""

from __future__ import annotations

from math import prod
from typing import Callable, Sequence

import numpy as np
from mlir import ir
from mlir.dialects import arith, bufferization, linalg, tensor

from lamina.schedules.analysis import FUSION_GROUP, FUSION_KIND


def matching_ops(root: ir.Operation, predicate: Callable[[ir.Operation], bool]
                 ) -> list[ir.Operation]:
    """The ops under `root` for which `predicate` holds, in program order
    (collected before any is rewritten)."""
    found: list[ir.Operation] = []

    def collect(child):
        if predicate(child):
            found.append(child)
        return ir.WalkResult.ADVANCE

    root.walk(collect, ir.WalkOrder.PRE_ORDER)
    return found


def static_shapes(op: ir.Operation) -> bool:
    """Whether every operand and result of `op` is a statically shaped tensor."""
    return all(isinstance(v.type, ir.RankedTensorType) and v.type.has_static_shape
               for v in list(op.operands) + list(op.results))


def int_array(attribute: ir.Attribute) -> list[int]:
    """The values of a dense integer elements attribute (strides, dilations)."""
    return [int(v) for v in ir.DenseIntElementsAttr(attribute)]


def defining_op(value: ir.Value, name: str) -> ir.Operation | None:
    """The op named `name` that defines `value`, or None."""
    owner = value.owner
    if isinstance(owner, ir.OpView):
        owner = owner.operation
    return owner if isinstance(owner, ir.Operation) and owner.name == name else None


def erase_unused(*ops: ir.Operation | None) -> None:
    """Erases each of `ops` (None skipped) whose result a rewrite left with
    no use."""
    for op in ops:
        if op is not None and not list(op.results[0].uses):
            op.erase()


def fusion_marks(op: ir.Operation) -> dict[str, ir.Attribute]:
    """The fusion group attributes of `op`."""
    return {key: op.attributes[key] for key in (FUSION_GROUP, FUSION_KIND)
            if key in op.attributes}


def mark(ops: list[ir.Operation], marks: dict[str, ir.Attribute]) -> None:
    """Puts the fusion group attributes `marks` on each of `ops`."""
    for new in ops:
        for key, value in marks.items():
            new.attributes[key] = value


def refilled(fill: ir.Operation, shape: list[int]) -> ir.Operation:
    """A fill of `fill`'s value over a new tensor of `shape`."""
    element = ir.RankedTensorType(fill.results[0].type).element_type
    return linalg.fill(fill.operands[0], outs=[tensor.empty(shape, element)]).owner.operation


def constant_padding(value: ir.Value) -> tuple[ir.Operation, ir.Attribute] | None:
    """The `tensor.pad` defining `value` and its padding constant, when it
    pads with a constant by static amounts."""
    pad = defining_op(value, "tensor.pad")
    if pad is None or len(pad.operands) != 1:
        return None
    padding = pad.regions[0].blocks[0].operations[0].operation
    if padding.name != "tensor.yield":
        return None
    constant = defining_op(padding.operands[0], "arith.constant")
    return (pad, constant.attributes["value"]) if constant is not None else None


def written_into_padding(padded_type: ir.RankedTensorType, value: ir.Attribute,
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
    written = write(same_rank_slice(filled, low, interior_shape))
    return tensor.insert_slice(written, filled, **slice_attributes(low, interior_shape))


def slice_attributes(offsets: list[int], sizes: list[int],
                     strides: list[int] | None = None) -> dict:
    """The static offsets, sizes and strides of a slice, as the tensor
    dialect's builders take them."""
    return dict(offsets=[], sizes=[], strides=[], static_offsets=offsets, static_sizes=sizes,
                static_strides=strides or [1] * len(sizes))


def same_rank_slice(value: ir.Value, offsets: list[int], sizes: list[int],
                    strides: list[int] | None = None) -> ir.Value:
    """A slice of `value` of the same rank (no dim dropped)."""
    element = ir.RankedTensorType(value.type).element_type
    return tensor.extract_slice(ir.RankedTensorType.get(sizes, element), value,
                                **slice_attributes(offsets, sizes, strides))


def collapsed(value: ir.Value, groups: list[list[int]]) -> ir.Value:
    """`value` with each group of its consecutive dims collapsed into one."""
    source = ir.RankedTensorType(value.type)
    shape = [prod(source.shape[d] for d in group) for group in groups]
    result = ir.RankedTensorType.get(shape, source.element_type)
    return tensor.collapse_shape(result, value, groups)


def permuted_constant(value: ir.Attribute, permutation: Sequence[int],
                      shape: Sequence[int] | None = None) -> ir.Attribute | None:
    """A dense floating-point constant reshaped to `shape` (row-major; None:
    as it is) and transposed by `permutation`, computed now with NumPy (a
    filter put in the layout a convolution reads, once instead of at every
    call); None where NumPy cannot hold its elements (bf16)."""
    try:
        dense = ir.DenseElementsAttr(value)
    except ValueError:
        return None
    tensor_type = ir.RankedTensorType(dense.type)
    element = tensor_type.element_type
    shape = list(tensor_type.shape if shape is None else shape)
    result_type = ir.RankedTensorType.get([shape[p] for p in permutation], element)
    if dense.is_splat:
        return ir.DenseElementsAttr.get_splat(result_type, dense.get_splat_value())
    try:
        array = np.array(dense)
    except (TypeError, ValueError, RuntimeError):
        return None
    if array.shape != tuple(tensor_type.shape) or array.dtype.kind != "f":
        return None
    return ir.DenseElementsAttr.get(
        np.ascontiguousarray(array.reshape(shape).transpose(list(permutation))), type=element)
