"""--cpu-dynamic-thread-schedule: parallel loops hand out their iterations
to threads as the threads come free.

`convert-scf-to-openmp` turns every `scf.parallel` (a schedule's
`scf.forall` over tiles) into an `omp.wsloop` with OpenMP's default
schedule, static: iteration `i` of `n` belongs to thread `i * threads / n`
before the loop starts. On a machine that other processes share, a thread
that the kernel delays then delays the whole loop by its whole share, and
every thread waits for it at the loop's barrier: with one of two cores
taken by another process, a program compiled for two threads ran 10-14x
slower than one compiled for one. With `schedule(dynamic)` a thread takes the
next iteration when it is done with its last one, so that a delayed thread
delays only the iteration it holds, and the others take the rest. On a
quiet machine the cost is one atomic increment per iteration, which a loop
over tiles does not feel.

Expects the LLVM-stage IR after `convert-scf-to-openmp`. Guarantees: every
`omp.wsloop` without a schedule gets `schedule(dynamic)`; a loop whose
schedule is stated is left alone, and the loops' iterations and bodies are
unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from lamina.linalg_builders import matching_ops
from lamina.pass_registry import Pass, register_pass

WSLOOP = "omp.wsloop"


@register_pass
@dataclass
class CPUDynamicThreadSchedule(Pass):
    """Gives OpenMP worksharing loops without a schedule the dynamic one, so that a delayed thread delays only the iteration it holds."""

    argument = "cpu-dynamic-thread-schedule"
    verifies_lamina_ops = False  # no op of Lamina's dialects at its stage

    def run(self, op: ir.Operation) -> None:
        with op.context:
            dynamic = ir.Attribute.parse("#omp<schedulekind dynamic>")
        for loop in matching_ops(op, lambda child: child.name == WSLOOP):
            if "schedule_kind" not in loop.attributes:
                loop.attributes["schedule_kind"] = dynamic
