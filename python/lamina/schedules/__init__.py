"""Schedules: how the linalg ops of a program become loop nests of vector
operations on the CPU, chosen per group of ops by a schedule kind, held as
data, and rendered into transform-dialect IR that upstream's transform
interpreter applies.

    from lamina.schedules import choose_schedules
    from lamina.targets.cpu_model import CPUModel

    for schedule in choose_schedules(module.operation, CPUModel(threads=2)):
        print(schedule.describe())

Each kind is a module with a `ScheduleKind` (its `choose(group, model)`)
and the record of its schedules (their `render`), see
lamina.schedules.kind: `attention` (loop bodies a lowering built,
vectorised in place), `convolution` (direct channels-last convolutions),
`dot_product` (integer contractions on the CPU's dot-product
instructions), `matrix_vector` (contractions with fewer rows than a
register tile, B read in place), `contraction` (packed matmuls, with
their epilogue) and `loop_nest`
(everything else, by rows). `KINDS` lists them in the order they are
asked; a group gets the schedules of the first kind that applies to it.
A new kind (a plugin's too) is added with `register_kind`.

`choose_schedules` tags the ops it schedules (`lamina.schedule = "TAG"`);
the `cpu-schedule` pass appends the rendered script to the module (what
`lamina-compile --emit=schedule` prints) and `cpu-apply-schedule` runs it.
A group whose ops carry a `lamina.schedule_choice` dictionary (the fields
of the CPU model a tuner chose for it, lamina.tuning) is scheduled from
the model with those fields.
"""

from __future__ import annotations

import dataclasses

from mlir import ir

from lamina.schedules.analysis import (SCHEDULE_CHOICE, SCHEDULE_TAG, Group, function_groups,
                                       loop_body_groups)
from lamina.schedules.attention import AttentionKind, attention_tiles
from lamina.schedules.contraction import ContractionKind
from lamina.schedules.convolution import ConvolutionKind
from lamina.schedules.dot_product import DotProductKind
from lamina.schedules.kind import Schedule, ScheduleKind
from lamina.schedules.loop_nest import LoopNestKind
from lamina.schedules.matrix_vector import MatrixVectorKind
from lamina.schedules.script import render
from lamina.targets.cpu_model import CPUModel

KINDS: list[ScheduleKind] = [AttentionKind(), ConvolutionKind(), DotProductKind(),
                             MatrixVectorKind(), ContractionKind(),
                             LoopNestKind()]
"""The schedule kinds, in the order they are asked; the last, loop nests,
applies to every group."""


def register_kind(kind: ScheduleKind) -> ScheduleKind:
    """Adds `kind`, asked after the kinds before it and before loop nests
    (which apply to every group); returns it."""
    KINDS.insert(len(KINDS) - 1, kind)
    return kind


def group_schedules(group: Group, model: CPUModel) -> list[Schedule]:
    """The schedules of `group`: those of the first kind that applies."""
    for kind in KINDS:
        schedules = kind.choose(group, model)
        if schedules is not None:
            return schedules
    return []


class ScheduleChoiceError(ValueError):
    """A `lamina.schedule_choice` that is not a dictionary of integer
    fields of the CPU model; `location` is the op carrying it."""

    def __init__(self, message: str, location: ir.Location):
        super().__init__(message)
        self.location = location


def choice_fields() -> list[str]:
    """The CPU model's fields a `lamina.schedule_choice` may set (not the
    target's facts, such as scalable vectors)."""
    return [f.name for f in dataclasses.fields(CPUModel) if f.metadata.get("choice", True)]


def chosen_model(group: Group, model: CPUModel) -> CPUModel:
    """`model` with the fields of the `lamina.schedule_choice` on the
    group's first op that has one. Raises ScheduleChoiceError."""
    for linalg in group.ops:
        if SCHEDULE_CHOICE not in linalg.op.attributes:
            continue
        attribute = linalg.op.attributes[SCHEDULE_CHOICE]
        location = linalg.op.location
        if not isinstance(attribute, ir.DictAttr):
            raise ScheduleChoiceError(f"'{SCHEDULE_CHOICE}' must be a dictionary of CPU model "
                                      f"fields, got {attribute}", location)
        fields = {}
        for named in ir.DictAttr(attribute):
            if named.name not in choice_fields():
                raise ScheduleChoiceError(
                    f"'{SCHEDULE_CHOICE}' has no field '{named.name}' (fields: "
                    f"{', '.join(choice_fields())})", location)
            value = named.attr
            if not isinstance(value, ir.IntegerAttr) or ir.IntegerAttr(value).value < 1:
                raise ScheduleChoiceError(f"'{SCHEDULE_CHOICE}' field '{named.name}' must be "
                                          f"a positive integer, got {value}", location)
            fields[named.name] = ir.IntegerAttr(value).value
        return dataclasses.replace(model, **fields)
    return model


def choose_schedules(module: ir.Operation, model: CPUModel) -> list[Schedule]:
    """Schedules for every function of `module`, each group scheduled from
    `model` (with the fields of its `lamina.schedule_choice`); tags the ops
    they name. Raises ScheduleChoiceError."""
    schedules: list[Schedule] = []
    for op in module.regions[0].blocks[0].operations:
        op = op.operation
        if op.name != "func.func" or not op.regions[0].blocks:
            continue
        function = ir.StringAttr(op.attributes["sym_name"]).value
        for group in function_groups(op) + loop_body_groups(op):
            prefix = f"{function}_{group.name}"
            for index, linalg in enumerate(group.ops):
                linalg.tag = f"{prefix}/{index}"
                linalg.op.attributes[SCHEDULE_TAG] = ir.StringAttr.get(linalg.tag, module.context)
            group.name = prefix
            schedules.extend(group_schedules(group, chosen_model(group, model)))
    return schedules


__all__ = ["KINDS", "Schedule", "ScheduleChoiceError", "ScheduleKind", "attention_tiles",
           "choose_schedules", "chosen_model", "group_schedules", "register_kind", "render"]
