"""--cpu-request-c-interface: public functions get the C interface.

Sets `llvm.emit_c_interface` on every public `func.func` that has a body, so
that the LLVM lowering also emits `_mlir_ciface_NAME`, a wrapper taking each
memref as a pointer to its descriptor `{allocated, aligned, offset,
sizes[rank], strides[rank]}`. That wrapper is the C ABI of a compiled
function: what the JIT calls from Python and what an object file exports.

Expects a module of `func.func`s (any level: tensors, memrefs or loops);
functions nested deeper than the module's body are not visited. Guarantees:
only that attribute is added; private functions and declarations are left
as they were.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from lamina.pass_registry import Pass, register_pass


def public_functions(module_op: ir.Operation) -> list[ir.Operation]:
    """The `func.func`s with a body directly in `module_op` whose visibility
    is public (stated or by default): the functions a caller can enter."""
    functions = []
    for region in module_op.regions:
        for block in region.blocks:
            for child in block.operations:
                child = child.operation
                if child.name != "func.func" or not child.regions[0].blocks:
                    continue
                visibility = child.attributes["sym_visibility"] if "sym_visibility" in \
                    child.attributes else None
                if visibility is None or ir.StringAttr(visibility).value == "public":
                    functions.append(child)
    return functions


@register_pass
@dataclass
class CPURequestCInterface(Pass):
    """Gives public functions with a body the C interface (`_mlir_ciface_NAME`, memref descriptors passed by pointer)."""

    argument = "cpu-request-c-interface"
    verifies_lamina_ops = False  # no op of Lamina's dialects at its stage

    def run(self, op: ir.Operation) -> None:
        for func in public_functions(op):
            func.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
