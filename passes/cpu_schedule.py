"""--cpu-schedule: a schedule for every fusion group and linalg op, appended
to the module as a transform-dialect script.

For each function, the linalg ops on tensors are grouped (the fusion
groups that `nn-inline-fused` marked; otherwise each op with the fills
that initialise it; and the ops a lowering placed inside a loop, flash
attention's, one group per loop), and each group gets the schedules of
the first schedule kind of `lamina.schedules` that applies to it:
contractions are packed, tiled for the caches and unrolled into a
register tile of FMAs, their elementwise epilogue computed on each block
of the result inside their loops; channels-last convolutions are tiled
into register tiles of output pixels x output channels, decomposed into
1-D convolutions and vectorised into FMAs; a loop's body is vectorised in
place, products as register tiles; elementwise ops and reductions are
split over threads by rows, with the group's producers fused into the
root's loop, and vectorised along their contiguous dim. The CPU model
the kinds choose from is the options' (`threads`, `vector-bits`,
`vector-registers`, `l1-bytes`, `l2-bytes`: the target model's), with the
fields a tuner chose for a group where its ops carry them as a
`lamina.schedule_choice` dictionary (`{l1_bytes = 24576 : i64}`; the
compile driver writes them from the tuning cache, lamina.tuning). Each
scheduled op gets the discardable attribute `lamina.schedule = "TAG"`,
and the schedules, rendered with the transform dialect's Python builders,
become a nested `module @lamina_schedule attributes
{transform.with_named_sequence}` at the end of the module, which
`cpu-apply-schedule` runs. A script already there is replaced.

Expects linalg on statically shaped tensors (ops it cannot analyse are
left unscheduled); NCHW convolutions are scheduled once
`cpu-convolutions-to-channels-last` (or the pointwise and grouped
rewrites) made them channels-last convolutions, contractions or
elementwise sums. A `lamina.schedule_choice` that is not a dictionary of
positive integer fields of the CPU model is an error at its op.
Guarantees: the payload is unchanged apart from the tags; the script's
entry is `@__transform_main`; the output depends on the input IR and the
options only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mlir import ir

from lamina.pass_registry import Pass, PassFailure, register_pass
from lamina.schedules import ScheduleChoiceError, choose_schedules, render
from lamina.schedules.script import schedule_script
from lamina.targets.cpu_model import CPUModel, default_threads


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
    vector_registers: int = field(default=0, metadata={"minimum": 0})
    """Vector registers of the target; 0: 32 for 512-bit vectors, else 16 (x86)."""
    l1_bytes: int = field(default=0, metadata={"minimum": 0})
    """Size of the L1 data cache the register tiles' panels fit in; 0: the CPU model's default."""
    l2_bytes: int = field(default=0, metadata={"minimum": 0})
    """Size of the L2 cache the cache blocks fit in; 0: the CPU model's default."""
    scalable: bool = False
    """Vectors are scalable (SVE) and `vector-bits` wide at least: elementwise vector code is vector-length agnostic, with masked tails."""
    dot_products: str = ""
    """The target's dot-product instructions, comma-separated LLVM feature names (`avx512vnni`): the integer contractions' schedules use them."""
    bf16_dot_products: bool = False
    """The CPU has a dot product of bf16 pairs into f32 vectors (AVX512-BF16's `vdpbf16ps`): bf16 contractions pack their operands in pairs along k and use it."""

    def model(self) -> CPUModel:
        registers = self.vector_registers or (32 if self.vector_bits >= 512 else 16)
        default = CPUModel()
        return CPUModel(vector_bits=self.vector_bits, vector_registers=registers,
                        l1_bytes=self.l1_bytes or default.l1_bytes,
                        l2_bytes=self.l2_bytes or default.l2_bytes,
                        threads=self.threads or default_threads(),
                        scalable_vectors=int(self.scalable),
                        dot_products=tuple(d for d in self.dot_products.split(",") if d),
                        bf16_dot_products=int(self.bf16_dot_products))

    def run(self, op: ir.Operation) -> None:
        previous = schedule_script(op)
        if previous is not None:
            previous.erase()
        try:
            schedules = choose_schedules(op, self.model())
        except ScheduleChoiceError as error:
            raise PassFailure(str(error), error.location) from None
        render(schedules, op.regions[0].blocks[0], op.location)
