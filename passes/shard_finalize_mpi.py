"""--shard-finalize-mpi: what upstream's MPI lowering leaves: its buffers and the grids.

Upstream's `convert-shard-to-mpi` lowers a `shard.all_reduce` on memrefs to
a fresh `memref.alloc`, a copy of the operand into it and an
`mpi.allreduce` in place; the result is that buffer. On the CPU it runs
after buffer deallocation (whose analysis rejects `mpi` ops, which declare
no memory effects), so nothing frees that buffer.

Expects bufferized functions after deallocation and `convert-shard-to-mpi`.
Each `memref.alloc` that an `mpi` op uses (directly or through a view) and
that no `memref.dealloc` frees gets one before the terminator of its block,
unless the terminator passes it on (then it is left alone). Guarantees: the
same values are computed; a buffer is freed only after its last use in its
block. The `shard.grid` ops, which nothing refers to after the
conversion, are erased.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import memref

from lamina.pass_registry import Pass, register_pass


def _users(value: ir.Value) -> list[ir.Operation]:
    """The users of a buffer and of the views of it."""
    found = []
    for use in value.uses:
        owner = use.owner
        found.append(owner)
        if owner.name in ("memref.collapse_shape", "memref.expand_shape", "memref.subview",
                          "memref.cast", "memref.reinterpret_cast"):
            found.extend(_users(owner.results[0]))
    return found


@register_pass
@dataclass
class ShardFinalizeMPI(Pass):
    """Frees the buffers that upstream's convert-shard-to-mpi allocates for the results of collectives, and erases the grids."""

    argument = "shard-finalize-mpi"
    verifies_lamina_ops = False  # no op of Lamina's dialects at its stage

    def run(self, op: ir.Operation) -> None:
        if not any(o.operation.name == "shard.grid" for o in op.regions[0].blocks[0].operations):
            return
        allocations: list[ir.Operation] = []
        grids: list[ir.Operation] = []

        def visit(inner):
            if inner.name == "memref.alloc":
                allocations.append(inner)
            elif inner.name == "shard.grid":
                grids.append(inner)
            return ir.WalkResult.ADVANCE

        op.walk(visit, ir.WalkOrder.PRE_ORDER)
        for allocation in allocations:
            users = _users(allocation.results[0])
            if not any(u.name.startswith("mpi.") for u in users):
                continue
            if any(u.name == "memref.dealloc" for u in users):
                continue
            block = allocation.block
            terminator = block.operations[len(block.operations) - 1]
            if any(u == terminator for u in users):
                continue
            with ir.InsertionPoint(terminator), allocation.location:
                memref.dealloc(allocation.results[0])
        for grid in grids:
            grid.erase()
