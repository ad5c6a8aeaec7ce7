"""The interface of a schedule kind, and of the schedules it chooses.

A `ScheduleKind` knows one way of turning a group of linalg ops into
loop nests of vector code (a packed contraction, a direct convolution, a
loop nest over rows, the loop body of flash attention). Its `choose(group,
model)` returns the group's schedules, or None when the kind does not
apply to the group; `lamina.schedules.KINDS` lists the kinds in the order
they are asked, and a group gets the schedules of the first that applies.

A `Schedule` is the kind's choice as data: a frozen record of the fields
that kind uses, which says what it decided (`describe`) and renders
itself into the transform-dialect IR that carries it out (`render`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from lamina.schedules.analysis import Group
from lamina.targets.cpu_model import CPUModel


@dataclass(frozen=True)
class Schedule(ABC):
    """How one group (or part of one) becomes vector loop nests: `group`
    names its transform sequence (`@schedule_GROUP`) and `root` is the tag
    of the op whose loops it tiles."""

    kind: ClassVar[str] = ""

    group: str
    root: str

    @abstractmethod
    def render(self, root: ir.Value) -> None:
        """Emits the transform ops of the schedule at the current insertion
        point; `root` is the handle of the whole payload."""

    def describe(self) -> str:
        """One line per decision, for humans (`--emit=schedule` shows the IR)."""
        return "\n".join([f"{self.group}: {self.kind}, root {self.root}"] + self.decisions())

    def decisions(self) -> list[str]:
        """The lines of `describe` after its header."""
        return []


class ScheduleKind(ABC):
    """One family of schedules (see the module docstring)."""

    name: ClassVar[str] = ""

    @abstractmethod
    def choose(self, group: Group, model: CPUModel) -> list[Schedule] | None:
        """The schedules of `group` on the CPU `model`, or None when this
        kind does not apply to it."""
