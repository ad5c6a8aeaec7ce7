"""--gpu-extern-dynamic-shared-memory: the block's dynamic shared memory
is declared as such in the PTX.

Upstream's lowering of `gpu.dynamic_shared_memory` (convert-gpu-to-nvvm)
makes the symbol every kernel addresses its dynamic shared memory through
an *internal* zero-length global of address space 3, which LLVM 22's NVPTX
backend prints as a one-byte static variable (`.shared .align 16 .b8
__dynamic_shmem__0;`) rather than as dynamic shared memory (`.extern
.shared ... []`). The tiles placed from that symbol then start wherever
ptxas puts the variable among the kernel's static shared memory: with one
kernel after its mbarriers, by luck; with the symbol shared by two kernels
of a module, before one kernel's mbarriers, whose words the TMA loads then
overwrite (on an H200: CUDA_ERROR_MISALIGNED_ADDRESS). Its alignment, 16
bytes, is also less than the 1024 bytes that 128-byte-swizzled TMA boxes
need and that `convert-hw-to-nvgpu` assumes.

This pass makes every zero-length global of address space 3 in the GPU
modules an external declaration aligned to `alignment` bytes (at least its
own): `.extern .shared .align 1024 .b8 __dynamic_shmem__0[];`, the
dynamic shared memory a launch gives the block, at an address aligned as
declared. Runs after the LLVM lowering of the kernels; other globals are
left alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from lamina.pass_registry import Pass, PassFailure, register_pass

SHARED = 3


@register_pass
@dataclass
class GPUExternDynamicSharedMemory(Pass):
    """Declares the kernels' zero-length shared-memory globals (upstream's dynamic shared memory symbol) external and aligned, so the PTX has dynamic shared memory instead of a one-byte static variable."""

    argument = "gpu-extern-dynamic-shared-memory"
    verifies_lamina_ops = False  # no op of Lamina's dialects at its stage
    alignment: int = 16

    def run(self, op: ir.Operation) -> None:
        if self.alignment < 1 or self.alignment & (self.alignment - 1):
            raise PassFailure(f"alignment={self.alignment} is not a power of two")
        external = ir.Attribute.parse("#llvm.linkage<external>", op.context)
        i64 = ir.IntegerType.get_signless(64, op.context)

        def visit(candidate: ir.Operation):
            candidate = candidate.operation
            if candidate.name == "llvm.mlir.global" and _is_dynamic_shared(candidate):
                attributes = candidate.attributes
                own = ir.IntegerAttr(attributes["alignment"]).value \
                    if "alignment" in attributes else 1
                attributes["linkage"] = external
                attributes["alignment"] = ir.IntegerAttr.get(i64, max(own, self.alignment))
                if "dso_local" in attributes:
                    del attributes["dso_local"]
            return ir.WalkResult.ADVANCE

        op.walk(visit)


def _is_dynamic_shared(global_op: ir.Operation) -> bool:
    attributes = global_op.attributes
    if "addr_space" not in attributes or ir.IntegerAttr(attributes["addr_space"]).value != SHARED:
        return False
    if len(global_op.regions[0].blocks) or "value" in attributes:
        return False  # a definition with contents
    text = str(ir.TypeAttr(attributes["global_type"]).value)
    return text.startswith("!llvm.array<0 x ")
