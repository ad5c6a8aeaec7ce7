"""--cpu-apply-schedule: runs the module's schedule script, then removes it.

Applies the entry `@__transform_main` of the nested
`module @lamina_schedule` (appended by `cpu-schedule`) to the module with
upstream's transform interpreter, then erases the script, the
`lamina.schedule` tags and the `lamina.schedule_choice`s of tuned groups.
A module without a script is left as it is.

Expects the product of `cpu-schedule`. Guarantees: the same computation,
with the scheduled groups as loop nests (`scf.forall` for threads,
`scf.for` inside) of vector ops on tensors; no transform ops and no
`lamina.schedule` or `lamina.schedule_choice` attributes remain.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from lamina.pass_registry import Pass, PassFailure, register_pass
from lamina.schedules.analysis import SCHEDULE_CHOICE, SCHEDULE_TAG
from lamina.schedules.script import ENTRY, schedule_script


@register_pass
@dataclass
class CPUApplySchedule(Pass):
    """Applies the module's schedule script (from cpu-schedule) with the transform interpreter and removes it."""

    argument = "cpu-apply-schedule"
    verifies_lamina_ops = False  # no op of Lamina's dialects at its stage

    def run(self, op: ir.Operation) -> None:
        from mlir.dialects.transform import interpreter

        script = schedule_script(op)
        if script is None:
            return
        entry = next((o.operation for o in script.regions[0].blocks[0].operations
                      if "sym_name" in o.operation.attributes
                      and ir.StringAttr(o.operation.attributes["sym_name"]).value == ENTRY), None)
        if entry is None:
            raise PassFailure(f"the schedule script has no @{ENTRY}", script.location)
        # The payload may not hold its own script while it runs.
        script = script.detach_from_parent()
        try:
            interpreter.apply_named_sequence(op, entry, script)
        except (ir.MLIRError, ValueError) as error:
            raise PassFailure(f"the schedule failed: {error}", script.location) from None

        def untag(child):
            for name in (SCHEDULE_TAG, SCHEDULE_CHOICE):
                if name in child.attributes:
                    del child.attributes[name]
            return ir.WalkResult.ADVANCE

        op.walk(untag, ir.WalkOrder.PRE_ORDER)
