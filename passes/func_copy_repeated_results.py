"""--func-copy-repeated-results: a buffer returned more than once is
returned once, and copied for its other results.

A function that returns one value twice (`return %0, %0`) returns one
buffer twice after bufferization. Upstream's
`buffer-results-to-out-params{hoist-static-allocs}` then replaces that
allocation by an out-parameter once per result, and ends the process
(it erases the allocation twice). For every repeated memref operand of a
`func.return` with a static shape, this pass allocates a buffer of the
function's result type and copies the value into it before the return,
so that each result is a buffer of its own; the copy is what the caller
would get anyway (each result is an array of its own).

Expects functions on memrefs, after one-shot bufferization and before
`buffer-results-to-out-params`. Guarantees: the same values are returned;
no `func.return` returns one static-shaped memref more than once.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import memref

from lamina.pass_registry import Pass, register_pass


@register_pass
@dataclass
class FuncCopyRepeatedResults(Pass):
    """Copies a buffer that a function returns more than once, so that each result is a buffer of its own."""

    argument = "func-copy-repeated-results"
    verifies_lamina_ops = False  # no op of Lamina's dialects at its stage
    anchor = "func.func"

    def run(self, op: ir.Operation) -> None:
        result_types = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value).results
        for block in op.regions[0].blocks:
            if not block.operations:
                continue
            terminator = list(block.operations)[-1].operation
            if terminator.name == "func.return":
                self._copy_repeats(terminator, result_types)

    def _copy_repeats(self, ret: ir.Operation, result_types) -> None:
        seen: list[ir.Value] = []
        for index, value in enumerate(list(ret.operands)):
            if not any(value == s for s in seen):
                seen.append(value)
                continue
            result_type = result_types[index]
            if not (isinstance(result_type, ir.MemRefType)
                    and ir.MemRefType(result_type).has_static_shape):
                continue
            with ret.location, ir.InsertionPoint(ret):
                copy = memref.alloc(result_type, [], [])
                memref.copy(value, copy)
            ret.operands[index] = copy
