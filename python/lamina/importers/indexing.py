"""Indexing in nn ops, shared by the importers: the lookups, masks and
positions that frameworks define on integer tensors, built from
`nn.gather`, `nn.iota`, `nn.compare` and `nn.select`.

Each function takes a `builder` with the two methods the importers give
their conversions: `op(name, *operands, result_type=None, **attrs)` (an nn
op at the node's location) and `scalar(value, like)` (a rank-0 constant of
`like`'s element type).

* `wrapped(builder, index, size)`: indices as i64, negative ones counted
  from the end of a dim of `size` (PyTorch's and ONNX's rule);
* `take(builder, x, positions, first)`: the elements of `x` at one index
  tensor per dim from `first` on (broadcast together: PyTorch's advanced
  indexing, ONNX's GatherND), a gather of the flattened dims;
* `take_along_axis(builder, x, index, axis)`: `torch.gather`, ONNX's
  GatherElements;
* `triangle(builder, x, diagonal, upper)`: `triu`/`tril` (ONNX's Trilu),
  through a mask of iotas.

What is still outside a dim after wrapping is clamped into it by
`nn.gather` (the frameworks reject it).
"""

from __future__ import annotations

from typing import Protocol, Sequence

import numpy as np
from mlir import ir

from lamina.types import TensorType


class Builder(Protocol):
    def op(self, name: str, *operands, result_type: TensorType | None = None,
           **attrs) -> ir.Value: ...

    def scalar(self, value: float, like: ir.Value) -> ir.Value: ...


def _type(value: ir.Value) -> TensorType:
    return TensorType.from_mlir(value.type)


def _cast(builder: Builder, x: ir.Value, dtype: str) -> ir.Value:
    if _type(x).dtype == dtype:
        return x
    return builder.op("cast", x, result_type=_type(x).with_dtype(dtype))


def wrapped(builder: Builder, index: ir.Value, size: int) -> ir.Value:
    """`index` as i64, each negative index `i` replaced by `size + i`."""
    index = _cast(builder, index, "i64")
    negative = builder.op("compare", index, builder.scalar(0, index), predicate="lt")
    return builder.op("select", negative, builder.op("add", index, builder.scalar(size, index)),
                      index)


def take(builder: Builder, x: ir.Value, positions: Sequence[ir.Value], first: int) -> ir.Value:
    """The elements of `x` at `positions`: one index tensor (wrapped) for
    each dim from `first` on, broadcast together. The result has the
    shape `x.shape[:first] + broadcast shape + x.shape[first + k:]`: the
    indexed dims of `x` are flattened into one and gathered at the
    row-major combination of the indices."""
    shape = _type(x).shape
    last = first + len(positions)
    positions = [wrapped(builder, p, shape[first + i]) for i, p in enumerate(positions)]
    common = tuple(np.broadcast_shapes(*(_type(p).shape for p in positions)))
    linear, stride = None, 1
    for dim, position in reversed(list(zip(range(first, last), positions))):
        if _type(position).shape != common:
            position = builder.op("broadcast_to", position,
                                  result_type=_type(position).with_shape(common))
        term = position if stride == 1 else builder.op("mul", position,
                                                       builder.scalar(stride, position))
        linear = term if linear is None else builder.op("add", term, linear)
        stride *= shape[dim]
    flat = _type(x).with_shape(shape[:first] + (stride,) + shape[last:])
    if flat.shape != shape:
        x = builder.op("reshape", x, result_type=flat)
    return builder.op("gather", x, linear, axis=first)


def take_along_axis(builder: Builder, x: ir.Value, index: ir.Value, axis: int) -> ir.Value:
    """`out[i][j][k] = x[i][index[i][j][k]][k]` (for axis 1): every dim of
    `x` indexed, by `index` along `axis` and by the element's position
    along the others (`index` has the rank of `x`)."""
    index_type = _type(index).with_dtype("i64")
    positions = [index if d == axis else builder.op("iota", result_type=index_type, axis=d)
                 for d in range(index_type.rank)]
    return take(builder, x, positions, 0)


def triangle(builder: Builder, x: ir.Value, diagonal, upper: bool) -> ir.Value:
    """`x` with the elements off a triangle of its last two dims zeroed:
    the upper keeps column - row >= diagonal, the lower column - row <=
    diagonal (an int, or an i64 tensor of one element computed at run
    time)."""
    x_type = _type(x)
    square = TensorType(x_type.shape[-2:], "i64")
    rows = builder.op("iota", result_type=square, axis=0)
    columns = builder.op("iota", result_type=square, axis=1)
    if isinstance(diagonal, ir.Value):
        rows = builder.op("add", rows, diagonal)
    elif diagonal:
        rows = builder.op("add", rows, builder.scalar(int(diagonal), rows))
    kept = builder.op("compare", columns, rows, predicate="ge" if upper else "le")
    return builder.op("select", kept, x, builder.scalar(0, x))


__all__ = ["Builder", "take", "take_along_axis", "triangle", "wrapped"]
