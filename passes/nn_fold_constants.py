"""--nn-fold-constants: nn ops whose operands are all constants are
evaluated at compile time.

Each op of Lamina's nn dialect whose every operand is a dense
`arith.constant` (as the importers make the weights of a model imported
with its parameters embedded) is run once, now, by its NumPy `reference`,
and replaced by an `arith.constant` holding its results; an op that feeds
on such results then folds in turn, so that all the computation on the
weights alone (a batch norm's scale and shift, a weight scaled by them, a
transposed weight) is gone from the compiled program. Upstream's
`canonicalize` folds only upstream ops, and `linalg-fuse-elementwise-ops`
only transposes and elementwise generics of constants at the linalg level,
after nn's ops have been lowered into loops the schedules treat as work;
nn ops are folded here, where their meaning is one NumPy call.

A result larger than its operands together (a broadcast, a padding) is
folded only when it holds at most `max-elements` elements, so that a
program does not grow by a materialised broadcast of a small constant; a
result whose elements are all equal becomes a splat. An op whose
reference cannot compute on these operands is left to run.

Expects verified nn IR. Guarantees: every folded op's results are those
its reference computes, in its result types; constants left without uses
by a fold are erased; nothing else changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from mlir import ir
from mlir.dialects import arith

from lamina.dialects.opdef import lookup_op
from lamina.nn import _constant
from lamina.pass_registry import Pass, register_pass
from lamina.reference import constant_array
from lamina.types import TensorType, numpy_dtype


def _dense_attribute(value: ir.Value) -> ir.Attribute | None:
    """The dense elements of a tensor `arith.constant` defining `value`, else None."""
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.operation.name != "arith.constant":
        return None
    attr = owner.operation.attributes["value"]
    if not isinstance(attr, ir.DenseElementsAttr) or not isinstance(value.type, ir.RankedTensorType):
        return None
    return attr


def _elements(t: ir.Type) -> int:
    return int(np.prod(ir.RankedTensorType(t).shape, dtype=np.int64))


def _splat(array: np.ndarray, result_type: ir.Type) -> ir.Attribute | None:
    """A splat attribute of `array` when its elements are all equal (and
    the bindings can make one of its element type)."""
    if array.size == 0 or not np.all(array == array.reshape(-1)[0]):
        return None
    element = ir.RankedTensorType(result_type).element_type
    scalar = array.reshape(-1)[0].item()
    if isinstance(element, ir.FloatType) and not isinstance(element, ir.BF16Type):
        scalar_attr = ir.FloatAttr.get(element, float(scalar))
    elif isinstance(element, ir.IntegerType) and ir.IntegerType(element).width > 1:
        scalar_attr = ir.IntegerAttr.get(element, int(scalar))
    else:
        return None
    return ir.DenseElementsAttr.get_splat(result_type, scalar_attr)


@register_pass
@dataclass
class NNFoldConstants(Pass):
    """Evaluates nn ops whose operands are all constants at compile time, by their NumPy references, into constants."""

    argument = "nn-fold-constants"
    anchor = "func.func"

    max_elements: int = field(default=1 << 16, metadata={"minimum": 0})

    def run(self, op: ir.Operation) -> None:
        for block in op.regions[0].blocks:
            for inner in list(block.operations):
                self._fold(inner.operation)

    def _fold(self, op: ir.Operation) -> None:
        op_class = lookup_op(op.name)
        if op_class is None or op_class.dialect.name != "nn" or not op.operands:
            return
        if not op.results or not all(isinstance(r.type, ir.RankedTensorType) for r in op.results):
            return
        attributes = [_dense_attribute(v) for v in op.operands]
        if any(a is None for a in attributes):
            return
        produced = sum(_elements(r.type) for r in op.results)
        if produced > max(sum(_elements(v.type) for v in op.operands), self.max_elements):
            return
        arrays = [constant_array(a, v.type) for a, v in zip(attributes, op.operands)]
        try:
            view = op_class.from_operation(op)
            if getattr(view, "callee", None) is not None:
                return
            with np.errstate(all="ignore"):
                results = view.run_reference(*arrays)
        except (ArithmeticError, ValueError, NotImplementedError, TypeError):
            return
        if len(op.results) == 1:
            results = [results]
        operands = list(dict.fromkeys(op.operands))
        with ir.InsertionPoint(op), op.location:
            for result, array in zip(op.results, results):
                result_type = TensorType.from_mlir(result.type, dynamic=True)
                array = np.asarray(array).astype(numpy_dtype(result_type.dtype),
                                                 copy=False).reshape(result_type.shape)
                splat = _splat(array, result.type)
                if splat is not None:
                    folded = arith.ConstantOp(result.type, splat).result
                else:
                    folded = _constant(array, result_type.dtype, op.location)
                result.replace_all_uses_with(folded)
        op.erase()
        for value in operands:
            owner = value.owner
            if not isinstance(owner, ir.Block) and not list(value.uses):
                owner.operation.erase()
