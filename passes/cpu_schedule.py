"""--cpu-schedule: a schedule for every fusion group and linalg op, appended
to the module as a transform-dialect script.

Static NCHW convolutions are first rewritten into channels-last ones
between transposes (1x1 ones of stride 1 into matrix products), and
grouped (and depthwise) ones into elementwise
sums over their filters' taps, with their padding in destination-passing
style (`lamina.schedules.convolution`). Then, for each
function, the linalg ops on tensors are grouped (the fusion
groups that `nn-inline-fused` marked; otherwise each op with the fills
that initialise it), and the cost model of `lamina.schedules` chooses a
`Schedule` for each group: contractions are packed, tiled for the caches
and unrolled into a register tile of FMAs, their elementwise epilogue
computed on each block of the result inside their loops; convolutions
are tiled into register tiles of output pixels x output channels,
decomposed into 1-D convolutions and vectorised into FMAs; elementwise ops and reductions
are split over threads by rows, with the group's producers fused into the
root's loop, and vectorised along their contiguous dim. Linalg ops that a
lowering placed inside loops (flash attention's) are vectorised where
they are, products as register tiles (`lamina.schedules.attention`).
Each scheduled op gets the discardable attribute `lamina.schedule =
"TAG"`, and the schedules, rendered with the transform dialect's Python
builders, become a nested `module @lamina_schedule attributes
{transform.with_named_sequence}` at the end of the module, which
`cpu-apply-schedule` runs.

Expects linalg on statically shaped tensors (ops it cannot analyse are
left unscheduled). Guarantees: the payload computes the same values,
unchanged apart from the tags and the convolutions' rewrites (a grouped
convolution's products and sums may contract into FMAs); the script's
entry is `@__transform_main`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mlir import ir

from lamina.pass_registry import Pass, register_pass
from lamina.schedules import CPUModel, choose_schedules, default_threads, render
from lamina.schedules.convolution import convolutions_to_channels_last, grouped_convolutions_to_taps
from lamina.tuning import tuned_model

SCRIPT_NAME = "lamina_schedule"


def schedule_script(module: ir.Operation) -> ir.Operation | None:
    """The `module @lamina_schedule` inside `module`, if any."""
    for op in module.regions[0].blocks[0].operations:
        op = op.operation
        if (op.name == "builtin.module" and "sym_name" in op.attributes
                and ir.StringAttr(op.attributes["sym_name"]).value == SCRIPT_NAME):
            return op
    return None


@register_pass
@dataclass
class CPUSchedule(Pass):
    """Chooses a schedule for each fusion group and linalg op on tensors and appends it to the module as a transform script."""

    argument = "cpu-schedule"
    verifies_lamina_ops = False  # no op of Lamina's dialects at its stage
    threads: int = field(default=0, metadata={"minimum": 0})
    """Threads the schedules split work for; 0: `LAMINA_NUM_THREADS`, else every core."""
    vector_bits: int = field(default=512, metadata={"minimum": 128})
    """Width of the target's vector registers."""

    def model(self) -> CPUModel:
        registers = 32 if self.vector_bits >= 512 else 16
        return CPUModel(vector_bits=self.vector_bits, vector_registers=registers,
                        threads=self.threads or default_threads())

    def run(self, op: ir.Operation) -> None:
        previous = schedule_script(op)
        if previous is not None:
            previous.erase()
        convolutions_to_channels_last(op)
        grouped_convolutions_to_taps(op)
        schedules = choose_schedules(op, self.model(), model_for=tuned_model)
        render(schedules, op.regions[0].blocks[0], op.location)
