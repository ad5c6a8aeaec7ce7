"""--cpu-widen-bool-memrefs: i1 buffers are stored as bytes.

Every `memref<...xi1>` in the module (function signatures, GPU kernels'
included, block arguments, op results, `memref.global`s and their initial
values) becomes
`memref<...xi8>`; a `memref.load` of such a buffer is followed by an
`arith.trunci` to i1, and a `memref.store` into one stores the `arith.extui`
of its i1 value. LLVM 22's memref-to-LLVM lowering aborts on loads of i1
elements, and bytes are what NumPy's bool arrays are, so the C ABI passes
bool arrays as bytes. The cuda targets run it on the kernels and their
host code after `convert-hw-to-nvgpu`, for the same abort in upstream's
NVVM lowering: kernel arguments of booleans are bytes in global memory.

Expects memrefs whose i1 elements are accessed by `memref.load` and
`memref.store` only (run after loops are formed): any other op taking an i1
buffer and i1 values (a vector transfer of i1 vectors) is reported as an
error at that op, and linalg ops on i1 buffers must be lowered to loops
first (their bodies would no longer match the buffers' element type). Ops
that merely pass a buffer on (`memref.alloc`, `memref.subview`,
`func.call`, `func.return`, ...) get the widened type.
Guarantees: no memref of i1 is left, and i1 values outside buffers are
unchanged; `true` is stored as the byte 1 and `false` as 0, and a loaded
byte is read through `arith.trunci` (its lowest bit).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlir import ir

from lamina.pass_registry import Pass, PassFailure, register_pass


def _element_type(t: ir.Type) -> ir.Type | None:
    if isinstance(t, ir.ShapedType):
        return ir.ShapedType(t).element_type
    return t


@register_pass
@dataclass
class CPUWidenBoolMemrefs(Pass):
    """Stores i1 buffers as bytes: every `memref<...xi1>` becomes `memref<...xi8>`; loads truncate and stores extend."""

    argument = "cpu-widen-bool-memrefs"
    verifies_lamina_ops = False  # no op of Lamina's dialects at its stage

    def run(self, op: ir.Operation) -> None:
        with op.location:
            self._widen(op)

    def _widen(self, op):
        i1 = ir.IntegerType.get_signless(1)
        i8 = ir.IntegerType.get_signless(8)

        def widened(t: ir.Type) -> ir.Type | None:
            if isinstance(t, ir.MemRefType) and t.element_type == i1:
                return ir.MemRefType.get(t.shape, i8, t.layout, t.memory_space)
            return None

        def widened_or_same(t: ir.Type) -> ir.Type:
            return widened(t) or t

        worklist: list[ir.Operation] = []

        def collect(operation):
            worklist.append(operation.operation)
            return ir.WalkResult.ADVANCE

        op.walk(collect, ir.WalkOrder.PRE_ORDER)
        # Decided on the original types, before any value is widened.
        touches = [any(widened(v.type) for v in operation.operands) for operation in worklist]
        accesses = []
        for operation, touches_bool_buffer in zip(worklist, touches):
            name = operation.name
            for region in operation.regions:
                for block in region.blocks:
                    for argument in block.arguments:
                        if widened(argument.type):
                            argument.set_type(widened(argument.type))
            if name in ("func.func", "gpu.func"):
                function_type = ir.FunctionType(ir.TypeAttr(operation.attributes["function_type"]).value)
                if any(widened(t) for t in list(function_type.inputs) + list(function_type.results)):
                    operation.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
                        [widened_or_same(t) for t in function_type.inputs],
                        [widened_or_same(t) for t in function_type.results]))
            elif name == "memref.global":
                global_type = ir.TypeAttr(operation.attributes["type"]).value
                if widened(global_type):
                    self._widen_global(operation, widened(global_type))
            elif name in ("memref.load", "memref.store"):
                if touches_bool_buffer:
                    accesses.append(operation)
            elif touches_bool_buffer and any(
                    _element_type(v.type) == i1 and not isinstance(v.type, ir.MemRefType)
                    for v in list(operation.operands) + list(operation.results)):
                raise PassFailure(f"'{name}' reads or writes i1 elements of a buffer; only "
                                  "memref.load and memref.store can (vectorize i1 ops as i8)",
                                  operation.location)
            for result in operation.results:
                if widened(result.type):
                    result.set_type(widened(result.type))
        for access in accesses:
            with ir.InsertionPoint(access), access.location:
                if access.name == "memref.load":
                    result = access.results[0]
                    result.set_type(i8)
                    with ir.InsertionPoint.after(access):
                        truncated = ir.Operation.create("arith.trunci", results=[i1],
                                                        operands=[result]).results[0]
                    result.replace_all_uses_except(truncated, truncated.owner.operation)
                else:
                    extended = ir.Operation.create("arith.extui", results=[i8],
                                                   operands=[access.operands[0]]).results[0]
                    access.operands[0] = extended

    @staticmethod
    def _widen_global(operation: ir.Operation, memref_type: ir.MemRefType) -> None:
        operation.attributes["type"] = ir.TypeAttr.get(memref_type)
        initial = operation.attributes["initial_value"] if "initial_value" in \
            operation.attributes else None
        if isinstance(initial, ir.DenseElementsAttr):
            tensor_type = ir.RankedTensorType.get(memref_type.shape, memref_type.element_type)
            dense = ir.DenseIntElementsAttr(initial)
            values = np.array([1 if dense[i] else 0 for i in range(len(dense))], np.int8)
            if dense.is_splat:
                values = np.full(memref_type.shape, 1 if dense.get_splat_value().value else 0,
                                 np.int8)
            operation.attributes["initial_value"] = ir.DenseElementsAttr.get(
                values.reshape(memref_type.shape), type=tensor_type)
