"""The transform script of a module: one `transform.named_sequence` per
schedule, each rendered by its kind, and a `@__transform_main` that
includes each of them with failures suppressed (a group whose schedule
the transforms refuse keeps whatever it got so far, and the `loops` stage
turns the rest into scalar loops).

Ops are found by the discardable attribute `lamina.schedule = "TAG"` that
`choose_schedules` sets and `cpu-apply-schedule` removes.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import builtin, transform

from lamina.schedules.kind import Schedule
from lamina.schedules.transforms import any_op

ENTRY = "__transform_main"
SCRIPT_NAME = "lamina_schedule"


def render(schedules: list[Schedule], block: ir.Block,
           location: ir.Location | None = None) -> ir.Operation:
    """Appends to `block` the transform module running `schedules`
    (`module @lamina_schedule`: one named sequence per group and the entry
    `@__transform_main`) and returns it."""
    with location or ir.Location.unknown(block.owner.context):
        with ir.InsertionPoint(block):
            module = builtin.ModuleOp()
        module.operation.attributes["transform.with_named_sequence"] = ir.UnitAttr.get()
        module.operation.attributes["sym_name"] = ir.StringAttr.get(SCRIPT_NAME)
        readonly = [{"transform.readonly": ir.UnitAttr.get()}]
        names = []
        with ir.InsertionPoint(module.body):
            for schedule in schedules:
                name = f"schedule_{schedule.group}"
                names.append(name)
                sequence = transform.NamedSequenceOp(name, [any_op()], [], arg_attrs=readonly)
                with ir.InsertionPoint(sequence.body):
                    schedule.render(sequence.bodyTarget)
                    transform.YieldOp()
            main = transform.NamedSequenceOp(ENTRY, [any_op()], [], arg_attrs=readonly)
            with ir.InsertionPoint(main.body):
                for name in names:
                    transform.IncludeOp([], ir.FlatSymbolRefAttr.get(name),
                                        transform.FailurePropagationMode.Suppress,
                                        [main.bodyTarget])
                transform.YieldOp()
        return module.operation


def schedule_script(module: ir.Operation) -> ir.Operation | None:
    """The `module @lamina_schedule` inside `module`, if any."""
    for op in module.regions[0].blocks[0].operations:
        op = op.operation
        if (op.name == "builtin.module" and "sym_name" in op.attributes
                and ir.StringAttr(op.attributes["sym_name"]).value == SCRIPT_NAME):
            return op
    return None
