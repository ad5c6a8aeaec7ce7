"""--cpu-check-lowered-to-llvm: fails, at the op, when an op is left outside the LLVM dialect.

Translation to LLVM IR and the JIT need a module fully lowered to the LLVM
dialect; an op left behind (a `func.func` when `convert-to-llvm` is
missing, a `linalg` op no pass lowers) would otherwise surface as an opaque
translation failure. This pass reports the first such op with its location:
`'OP' was not lowered to the LLVM dialect (no pass of the pipeline converts
it)`. A real op is preferred to the `builtin.unrealized_conversion_cast`s
that a partial conversion leaves around it.

Expects any module; it is meant to close the pipeline's `llvm-mlir` stage.
Guarantees: the IR is not changed; when it succeeds, every op under the
module is in the LLVM dialect or the OpenMP dialect (whose ops translation
to LLVM IR turns into calls of the OpenMP runtime).
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from lamina.diagnostics import CompileError
from lamina.pass_registry import Pass, PassFailure, register_pass


# Dialects that translation to LLVM IR takes as they are: the LLVM dialect,
# and OpenMP (its ops become calls of the OpenMP runtime there).
TRANSLATABLE = ("llvm.", "omp.")


def unlowered_op(module) -> ir.Operation | None:
    """The first op of a module that is not in the LLVM dialect, preferring
    a real op to the conversion casts left around it; None if there is none."""
    operation = module.operation if isinstance(module, ir.Module) else module
    found: list[ir.Operation] = []

    def visit(op):
        op = op.operation
        if op.name != "builtin.module" and not op.name.startswith(TRANSLATABLE):
            found.append(op)
            if op.name != "builtin.unrealized_conversion_cast":
                return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    real = [op for op in found if op.name != "builtin.unrealized_conversion_cast"]
    return (real or found or [None])[0]


def _not_lowered_message(op: ir.Operation) -> str:
    return (f"'{op.name}' was not lowered to the LLVM dialect (no pass of the pipeline "
            "converts it)")


def check_llvm_dialect(module) -> None:
    """Raises CompileError at the first op that is not in the LLVM dialect
    (translation and the JIT need a module fully lowered to it)."""
    op = unlowered_op(module)
    if op is not None:
        raise CompileError.at(op.location, _not_lowered_message(op))


@register_pass
@dataclass
class CPUCheckLoweredToLLVM(Pass):
    """Fails, at the op, when an op is left outside the LLVM dialect."""

    argument = "cpu-check-lowered-to-llvm"
    verifies_lamina_ops = False  # no op of Lamina's dialects at its stage

    def run(self, op: ir.Operation) -> None:
        left = unlowered_op(op)
        if left is not None:
            raise PassFailure(_not_lowered_message(left), left.location)
