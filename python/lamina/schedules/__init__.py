"""Schedules: how the linalg ops of a program become loop nests of vector
operations on the CPU, chosen per fusion group, held as data
(`Schedule`), and rendered into transform-dialect IR that upstream's
transform interpreter applies.

    from lamina.schedules import CPUModel, choose_schedules, render

    schedules = choose_schedules(module.operation, CPUModel(threads=2))
    for s in schedules:
        print(s.describe())

`choose_schedules` tags the ops it schedules (`lamina.schedule = "TAG"`);
the `cpu-schedule` pass appends the rendered script to the module (what
`lamina-compile --emit=schedule` prints) and `cpu-apply-schedule` runs it.
"""

from __future__ import annotations

from typing import Callable

from mlir import ir

from lamina.schedules.analysis import SCHEDULE_TAG, Group, function_groups
from lamina.schedules.attention import attention_tiles, loop_body_schedules
from lamina.schedules.cost_model import CPUModel, default_threads, group_schedules
from lamina.schedules.schedule import OpTiling, Packing, Schedule, render


def choose_schedules(module: ir.Operation, model: CPUModel,
                     model_for: Callable[[Group, CPUModel], CPUModel] | None = None
                     ) -> list[Schedule]:
    """Schedules for every function of `module`; tags the ops they name.
    `model_for(group, model)` gives the model of one group (a tuned one,
    see lamina.tuning); by default every group gets `model`."""
    schedules: list[Schedule] = []
    for op in module.regions[0].blocks[0].operations:
        op = op.operation
        if op.name != "func.func" or not op.regions[0].blocks:
            continue
        function = ir.StringAttr(op.attributes["sym_name"]).value
        for group in function_groups(op):
            prefix = f"{function}_{group.name}"
            for index, linalg in enumerate(group.ops):
                linalg.tag = f"{prefix}/{index}"
                linalg.op.attributes[SCHEDULE_TAG] = ir.StringAttr.get(linalg.tag, module.context)
            group.name = prefix
            schedules.extend(group_schedules(group, model_for(group, model) if model_for
                                             else model))
        schedules.extend(loop_body_schedules(op, function, model, module.context))
    return schedules


__all__ = ["CPUModel", "OpTiling", "Packing", "Schedule", "attention_tiles", "choose_schedules",
           "default_threads", "render"]
