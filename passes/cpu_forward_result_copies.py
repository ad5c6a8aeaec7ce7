"""--cpu-forward-result-copies: a result computed in a buffer of another
shape is computed in the out-parameter itself.

After `buffer-results-to-out-params`, a function whose result was computed
in a local buffer and returned through a reshape (a packed matmul writes
its `[M, N/32, 32]` blocks, the result is the `[M, N]` view of them) ends
with `memref.copy %view, %out` (or a `linalg.copy`). When `%out` is an argument of the function
used by that copy only, `%view` is a chain of `memref.collapse_shape` /
`memref.expand_shape` of a `memref.alloc` with a static identity layout in
the function's body, and nothing uses the buffer after the copy, the
buffer is replaced by the inverse reshapes of `%out` and the copy is
erased: the computation writes the caller's array directly.

Expects functions on memrefs, after `buffer-results-to-out-params` and
before buffer deallocation. Guarantees: the same values end up in every
out-parameter; only such copies and buffers are removed.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import memref

from lamina.pass_registry import Pass, register_pass
from lamina.types import identity_layout

_RESHAPES = ("memref.collapse_shape", "memref.expand_shape")


def _reassociation(op: ir.Operation) -> list[list[int]]:
    return [[ir.IntegerAttr(i).value for i in group] for group in op.attributes["reassociation"]]


@register_pass
@dataclass
class CPUForwardResultCopies(Pass):
    """Computes results that are copied out of a reshaped local buffer directly in their out-parameters."""

    argument = "cpu-forward-result-copies"
    verifies_lamina_ops = False  # no op of Lamina's dialects at its stage
    anchor = "func.func"

    def run(self, op: ir.Operation) -> None:
        if not op.regions[0].blocks:
            return
        body = op.regions[0].blocks[0]
        arguments = list(body.arguments)
        for copy in [o.operation for o in body.operations
                     if o.operation.name in ("memref.copy", "linalg.copy")]:
            self._forward(copy, body, arguments)

    def _forward(self, copy: ir.Operation, body: ir.Block, arguments) -> None:
        source, target = copy.operands
        if not isinstance(target.type, ir.MemRefType):
            return
        if not any(target == a for a in arguments) or sum(1 for _ in target.uses) != 1:
            return
        if not identity_layout(ir.MemRefType(target.type)):
            return
        chain = []
        value = source
        while isinstance(value.owner, ir.OpView) and value.owner.operation.name in _RESHAPES:
            chain.append(value.owner.operation)
            value = value.owner.operation.operands[0]
        if not (isinstance(value.owner, ir.OpView) and value.owner.operation.name == "memref.alloc"):
            return
        alloc = value.owner.operation
        alloc_type = ir.MemRefType(alloc.results[0].type)
        if (alloc.parent != copy.parent or not alloc_type.has_static_shape
                or not identity_layout(alloc_type) or list(alloc.operands)):
            return
        order = {o.operation: i for i, o in enumerate(body.operations)}
        position = order[copy]
        if not self._all_uses_before(alloc.results[0], body, order, position, chain + [copy]):
            return
        with alloc.location, ir.InsertionPoint(alloc):
            replacement = target
            for reshape in chain:
                source_type = reshape.operands[0].type
                groups = _reassociation(reshape)
                if reshape.name == "memref.collapse_shape":
                    replacement = memref.expand_shape(source_type, replacement, groups, [],
                                                      list(ir.MemRefType(source_type).shape))
                else:
                    replacement = memref.collapse_shape(source_type, replacement, groups)
        alloc.results[0].replace_all_uses_with(replacement)
        copy.erase()
        for reshape in chain:
            if not list(reshape.results[0].uses):
                reshape.erase()
        alloc.erase()

    def _all_uses_before(self, value: ir.Value, body: ir.Block, order, position: int,
                         exempt: list[ir.Operation]) -> bool:
        """Every user of `value` (and of its views) lies in an op of `body`
        before `position`, apart from the ops in `exempt`."""
        for use in value.uses:
            user = use.owner.operation if hasattr(use.owner, "operation") else use.owner
            if any(user == e for e in exempt):
                continue
            top = user
            while top.parent is not None and top.parent != body.owner:
                top = top.parent
            if order.get(top, position) >= position:
                return False
            if user.name in ("memref.subview", "memref.expand_shape", "memref.collapse_shape",
                             "memref.cast", "memref.reinterpret_cast"):
                if not self._all_uses_before(user.results[0], body, order, position, exempt):
                    return False
        return True
