"""--cpu-strided-copies-to-loops: copies between strided views become
`linalg.copy`, hence loops.

`finalize-memref-to-llvm` lowers a `memref.copy` between contiguous
buffers to `llvm.memcpy`, but one involving a strided view (the padded
packs of a scheduled matmul copy the input into a corner of a larger
buffer) to a call of `memrefCopy` from MLIR's runner utilities, which an
object file from `--emit=obj` is not linked with. This pass rewrites such
copies as `linalg.copy`, which `convert-linalg-to-loops` turns into loops.

Expects memrefs (after bufferization), before `convert-linalg-to-loops`.
Guarantees: the same values are copied; copies between identity layouts
are left alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import linalg

from lamina.pass_registry import Pass, register_pass


def _contiguous(memref_type: ir.Type) -> bool:
    layout = ir.MemRefType(memref_type).layout
    return isinstance(layout, ir.AffineMapAttr) and layout.value == ir.AffineMap.get_identity(
        layout.value.n_dims)


@register_pass
@dataclass
class CPUStridedCopiesToLoops(Pass):
    """Rewrites memref.copy between strided views as linalg.copy, which becomes loops instead of a runtime call."""

    argument = "cpu-strided-copies-to-loops"
    verifies_lamina_ops = False  # no op of Lamina's dialects at its stage
    anchor = "func.func"

    def run(self, op: ir.Operation) -> None:
        copies = []

        def collect(child):
            if child.name == "memref.copy":
                copies.append(child.operation)
            return ir.WalkResult.ADVANCE

        op.walk(collect, ir.WalkOrder.PRE_ORDER)
        for copy in copies:
            source, target = copy.operands
            if _contiguous(source.type) and _contiguous(target.type):
                continue
            with copy.location, ir.InsertionPoint(copy):
                linalg.copy(source, outs=[target])
            copy.erase()
