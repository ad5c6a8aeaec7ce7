"""--cpu-hide-implementations: object files export only the C interfaces.

Gives `#llvm.linkage<internal>` to every `llvm.func` with a body at the top
level of the module whose name does not start with `_mlir_ciface_`. An
object file then exports only the C-interface wrappers (see
`--cpu-request-c-interface`): a kernel named `main` must not clash with a
C program's, and the functions the wrappers call stay private to the object.

Expects the LLVM dialect (after `convert-to-llvm`). Guarantees: only
linkage attributes change; declarations (`llvm.func` without a body, such
as `malloc` or `expf`) and the `_mlir_ciface_` functions keep their
linkage.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from lamina.pass_registry import Pass, register_pass


@register_pass
@dataclass
class CPUHideImplementations(Pass):
    """Gives internal linkage to every defined LLVM function but the C interfaces (`_mlir_ciface_*`), so that an object file exports only those."""

    argument = "cpu-hide-implementations"
    verifies_lamina_ops = False  # no op of Lamina's dialects at its stage

    def run(self, op: ir.Operation) -> None:
        internal = ir.Attribute.parse("#llvm.linkage<internal>")
        for child in op.regions[0].blocks[0].operations:
            child = child.operation
            if child.name == "llvm.func" and child.regions[0].blocks and not \
                    ir.StringAttr(child.attributes["sym_name"]).value.startswith("_mlir_ciface_"):
                child.attributes["linkage"] = internal
