"""The CUDA targets: NVIDIA GPUs of compute capability 8.0 (`cuda:sm_80`,
Ampere: cp.async, ldmatrix, mma.sync) and 9.0a (`cuda:sm_90a`, Hopper: also
TMA, mbarriers and wgmma).

Programs reach the GPU through the `hw` dialect. The pipeline, stage by
stage:

* `nn`: operator-level simplification (the shared front end's first stage);
* `hw`: the hardware level, checked: pipelining annotations realised
  (`hw-pipeline`), the architecture's limits (`hw-check`) and the hazards
  of the kernels' synchronisation (`hw-check-hazards`). Its output is an
  editable checkpoint: `--emit=hw` prints hw IR that `lamina-compile` and
  `lamina-run` take as input.

Every hw program also runs on the CPU, through the emulation
(`CUDATarget.emulation()`, `lamina-run --target=cuda:sm_80 --emulate`):
after the `hw` stage, `convert-hw-to-loops` turns the kernels into host
loops and the CPU target's stages compile them; arrays in global memory
are the kernels' arguments, passed in place.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from lamina.diagnostics import CompileError
from lamina.pipeline import Pipeline, Stage
from lamina.runtime import CompiledFunction, jit_compile
from lamina.targets import Target, register_target
from lamina.targets.frontend import frontend_stages


@dataclass(frozen=True)
class Architecture:
    """What Lamina uses of an NVIDIA GPU architecture."""

    name: str
    # Shared memory a block may use (the opt-in maximum), in bytes.
    shared_memory_bytes: int
    # The PTX ISA version the generated code declares.
    ptx_version: str
    has_tma: bool
    has_wgmma: bool


ARCHITECTURES = {
    "sm_80": Architecture("sm_80", 163 * 1024, "7.0", has_tma=False, has_wgmma=False),
    "sm_90a": Architecture("sm_90a", 227 * 1024, "8.0", has_tma=True, has_wgmma=True),
}


def architecture(name: str) -> Architecture:
    """The architecture called `name`; raises ValueError naming the known ones."""
    if name not in ARCHITECTURES:
        raise ValueError(f"unknown CUDA architecture '{name}' (known: "
                         f"{', '.join(ARCHITECTURES)})")
    return ARCHITECTURES[name]


class CUDATarget(Target):
    """An NVIDIA GPU architecture; programs go through the hw dialect."""

    kind = "cuda"

    def __init__(self, arch: str | None = None):
        self.arch = architecture(arch or "sm_80")

    @property
    def name(self) -> str:
        return f"cuda:{self.arch.name}"

    def hw_stages(self) -> list[Stage]:
        """The front end and the hw stage, shared by the GPU and the
        emulation pipelines."""
        return [frontend_stages()[0], Stage("hw", [
            "hw-check-hazards",
        ], description="block-collective tiles, checked for hazards")]

    def pipeline(self) -> Pipeline:
        return Pipeline(self.hw_stages(), target=self)

    def emulation(self) -> "EmulatedCUDATarget":
        """The same hw programs run on the CPU (see the module docstring)."""
        return EmulatedCUDATarget(self)

    def compile(self, module: ir.Module, entry: str | None = None,
                pipeline: Pipeline | None = None) -> CompiledFunction:
        raise CompileError.at(module.operation.location,
                              f"target '{self.name}' cannot run programs on this machine: "
                              "run its kernels on the CPU with the emulation (lamina-run "
                              "--emulate, or the target's emulation())")


class EmulatedCUDATarget(Target):
    """A CUDA target's hw programs, emulated on the CPU."""

    kind = "cuda-emulated"

    def __init__(self, gpu: CUDATarget):
        self.gpu = gpu
        from lamina.targets.cpu import CPUTarget
        self.cpu = CPUTarget()

    @property
    def name(self) -> str:
        return f"{self.gpu.name} (emulated)"

    def runtime_libraries(self) -> list[str]:
        return self.cpu.runtime_libraries()

    def pipeline(self) -> Pipeline:
        cpu = self.cpu.pipeline()
        return Pipeline(self.gpu.hw_stages() + [
            Stage("emulation", [
                "convert-hw-to-loops",
                "canonicalize",
                "cse",
            ], description="the kernels as host loops over memrefs"),
        ] + [cpu.stage(name) for name in ("bufferized", "vector", "loops", "llvm-mlir")],
            target=self)

    def compile(self, module: ir.Module, entry: str | None = None,
                pipeline: Pipeline | None = None) -> CompiledFunction:
        return jit_compile(module, entry=entry, pipeline=pipeline or self.pipeline(),
                           shared_libs=self.runtime_libraries(), opt_level=self.cpu.opt_level)


@register_target("cuda")
def _cuda_target(arch: str | None) -> Target:
    return CUDATarget(arch)
