"""--cpu-plan-memory: a function's buffers share one arena, placed by
their lifetimes.

After bufferization and buffer deallocation, every intermediate of a
program is a `memref.alloc` in its function's body, freed by a
`memref.dealloc` at the end of the function: all of them live for the
whole call (a ResNet-50 holds every activation at once) and each layer
writes memory that no earlier layer touched, so the activations of
consecutive layers do not share the caches. This pass gives each such
buffer its lifetime (from its `memref.alloc` to the last op of the body
that uses it or a view of it) and places the buffers in one arena, a
buffer at the lowest offset that no buffer alive at the same time
occupies (largest buffers first; offsets aligned to 64 bytes or the
buffer's alignment): the arena is allocated once per call, a buffer is a
`memref.view` of it, and a later layer reuses the bytes, still in cache,
of an activation no longer needed. ONNX Runtime's memory patterns and
IREE's stream allocation plan memory likewise; upstream MLIR has no such
pass.

Planned: allocations in the function's body (not in a loop or another
region) of a static shape with the identity layout, in the default memory
space, of whole bytes per element, whose uses are ops in the body (or
nested in them), views of them (subview, reshapes, casts), and their own
deallocations, which are erased. A buffer that escapes (returned, yielded
by a loop, reached by an op that makes a new memref of it that is not a
view) keeps its own allocation. The function gets the plan as
`lamina.memory_plan = {arena_bytes, buffers, buffer_bytes}`: the arena's
size, the buffers in it and the bytes they took apart (the peak a call
needs beside its arguments is the arena plus the unplanned buffers).

Expects functions on memrefs with explicit deallocations (after
`bufferization-lower-deallocations`), ops of a block running in order
(a parallel loop is one op). Guarantees: the buffers of one function
whose lifetimes overlap occupy disjoint bytes of the arena; no value
computed changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from mlir import ir
from mlir.dialects import arith, memref

from lamina.pass_registry import Pass, register_pass
from lamina.types import identity_layout

# Ops whose memref result is a view of their first operand's buffer.
_VIEWS = ("memref.subview", "memref.expand_shape", "memref.collapse_shape", "memref.cast",
          "memref.reinterpret_cast", "memref.transpose")
ALIGNMENT = 64
# The attribute that holds a function's plan.
MEMORY_PLAN = "lamina.memory_plan"


def _bytes(memref_type: ir.MemRefType) -> int | None:
    """The bytes of a static buffer of whole-byte elements, else None."""
    element = memref_type.element_type
    width = (element.width if isinstance(element, (ir.IntegerType, ir.FloatType))
             else None)
    if width is None or width % 8:
        return None
    return int(np.prod(memref_type.shape, dtype=np.int64)) * width // 8


@dataclass
class _Buffer:
    alloc: ir.Operation
    size: int
    alignment: int
    start: int
    end: int
    deallocs: list
    offset: int = 0


@register_pass
@dataclass
class CPUPlanMemory(Pass):
    """Places a function's intermediate buffers in one arena by their lifetimes."""

    argument = "cpu-plan-memory"
    verifies_lamina_ops = False  # no op of Lamina's dialects at its stage
    anchor = "func.func"
    # The least alignment of the arena and of every offset in it.
    alignment: ClassVar[int] = ALIGNMENT
    # Whether the function frees the arena before it returns (else its
    # owner does, after bufferization's deallocation passes).
    frees_arena: ClassVar[bool] = True

    def run(self, op: ir.Operation) -> None:
        if not op.regions[0].blocks:
            return
        body = op.regions[0].blocks[0]
        order = {o.operation: i for i, o in enumerate(body.operations)}
        buffers = [b for b in (self._buffer(o.operation, body, order) for o in body.operations
                               if o.operation.name == "memref.alloc") if b is not None]
        if len(buffers) < 2:
            return
        arena = _place(buffers)
        terminator = list(body.operations)[-1].operation
        with op.context, ir.Location.unknown(op.context):
            first = list(body.operations)[0].operation
            with ir.InsertionPoint(first):
                i8 = ir.IntegerType.get_signless(8)
                storage = memref.AllocOp(ir.MemRefType.get([arena], i8), [], [],
                                         alignment=ir.IntegerAttr.get(
                                             ir.IntegerType.get_signless(64),
                                             self.alignment)).result
            for buffer in buffers:
                with buffer.alloc.location, ir.InsertionPoint(buffer.alloc):
                    offset = arith.constant(ir.IndexType.get(), buffer.offset)
                    view = memref.view(buffer.alloc.results[0].type, storage, offset, [])
                buffer.alloc.results[0].replace_all_uses_with(view)
                for dealloc in buffer.deallocs:
                    dealloc.erase()
                buffer.alloc.erase()
            if self.frees_arena:
                with ir.InsertionPoint(terminator):
                    memref.dealloc(storage)
            i64 = ir.IntegerType.get_signless(64)
            op.attributes[MEMORY_PLAN] = ir.DictAttr.get({
                "arena_bytes": ir.IntegerAttr.get(i64, arena),
                "buffers": ir.IntegerAttr.get(i64, len(buffers)),
                "buffer_bytes": ir.IntegerAttr.get(i64, sum(b.size for b in buffers)),
            })

    def _buffer(self, alloc: ir.Operation, body: ir.Block, order) -> _Buffer | None:
        """`alloc` as a buffer to place, or None when it may not be."""
        memref_type = ir.MemRefType(alloc.results[0].type)
        if (list(alloc.operands) or not memref_type.has_static_shape
                or not identity_layout(memref_type) or memref_type.memory_space is not None):
            return None
        size = _bytes(memref_type)
        if not size:
            return None
        alignment = self.alignment
        if "alignment" in alloc.attributes:
            alignment = max(alignment, ir.IntegerAttr(alloc.attributes["alignment"]).value)
        deallocs: list[ir.Operation] = []
        end = self._last_use(alloc.results[0], body, order, deallocs, own=True)
        if end is None:
            return None
        return _Buffer(alloc, size, alignment, order[alloc], max(end, order[alloc]), deallocs)

    def _last_use(self, value: ir.Value, body: ir.Block, order, deallocs: list,
                  own: bool) -> int | None:
        """The position in `body` of the last op using `value` or its views
        (the deallocations of the buffer itself, `own`, collected in
        `deallocs` rather than counted); None when the buffer escapes."""
        last = -1
        for use in value.uses:
            user = use.owner.operation if hasattr(use.owner, "operation") else use.owner
            if user.name == "memref.dealloc":
                if not own:
                    return None  # a view freed: not a pattern this pass knows
                deallocs.append(user)
                continue
            if user.name in ("func.return", "scf.yield", "memref.extract_aligned_pointer_as_index"):
                return None
            top = user
            while top.parent is not None and top.parent != body.owner:
                top = top.parent
            if top not in order:
                return None
            if user.name in _VIEWS:
                if use.operand_number != 0:
                    return None
                inner = self._last_use(user.results[0], body, order, deallocs, own=False)
                if inner is None:
                    return None
                last = max(last, inner)
            elif any(isinstance(r.type, (ir.MemRefType, ir.UnrankedMemRefType))
                     for r in user.results):
                return None  # a new memref made of it: it may alias the buffer
            last = max(last, order[top])
        return last


def _place(buffers: list[_Buffer]) -> int:
    """Assigns each buffer an offset (largest first, the lowest aligned
    offset free of every placed buffer alive at the same time) and
    returns the arena's size."""
    placed: list[_Buffer] = []
    for buffer in sorted(buffers, key=lambda b: (-b.size, b.start)):
        busy = sorted((b.offset, b.offset + b.size) for b in placed
                      if b.start <= buffer.end and buffer.start <= b.end)
        offset = 0
        for low, high in busy:
            if offset + buffer.size <= low:
                break
            offset = max(offset, -(-high // buffer.alignment) * buffer.alignment)
        buffer.offset = offset
        placed.append(buffer)
    return max(b.offset + b.size for b in buffers)
