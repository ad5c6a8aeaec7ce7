"""--hw-plan-memory: a GPU program's intermediates share one device
arena, placed by their lifetimes at offsets fixed at compile time.

After the hw stage's bufferization, the host function of a GPU program
allocates each buffer passed between two kernels (`memref.alloc` in
global memory) and launches the kernels in order (`hw.launch`). Allocated
one by one, a model of a hundred kernels holds every activation for the
whole call and asks the driver for memory once per buffer. This pass
places them as `cpu-plan-memory` places a CPU function's buffers (the
same liveness analysis and placement: a buffer lives from its allocation
to the last launch, copy or view that uses it, and takes the lowest
offset that no buffer alive at the same time occupies, largest first):
one arena (`memref.alloc` of bytes), each buffer a `memref.view` of it at
a constant offset, a multiple of 256 bytes (the alignment of
`cuMemAlloc`, above what vector accesses and TMA descriptors need), so
the GPU runtime allocates the arena once and never at a call, and a
later kernel's output reuses the bytes of an activation no longer
needed. The function gets the plan as `lamina.memory_plan =
{arena_bytes, buffers, buffer_bytes}`, which the kernel manifest and
`lamina-run --report` show. The arena is not freed in the function: the
runtime owns it (the CPU emulation's deallocation passes free it).

Expects the host functions of the hw stage: memrefs in global memory
(the default space), results as out-parameters, kernels launched by
`hw.launch`. Functions marked `hw.kernel` are left alone (their buffers
are shared or private memory, `hw.alloc`). Guarantees: buffers of one
function whose lifetimes overlap occupy disjoint bytes of the arena; the
arguments are not touched; no value computed changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from mlir import ir

from lamina.dialects.hw import KERNEL_ATTRIBUTE
from lamina.pass_registry import register_pass
from lamina.passes.cpu_plan_memory import CPUPlanMemory


@register_pass
@dataclass
class HWPlanMemory(CPUPlanMemory):
    """Places a GPU program's intermediate buffers in one device arena by their lifetimes."""

    argument = "hw-plan-memory"
    verifies_lamina_ops = True
    alignment: ClassVar[int] = 256
    frees_arena: ClassVar[bool] = False

    def run(self, op: ir.Operation) -> None:
        if KERNEL_ATTRIBUTE in op.attributes:
            return
        super().run(op)
