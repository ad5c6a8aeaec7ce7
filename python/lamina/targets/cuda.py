"""The CUDA targets: NVIDIA GPUs of compute capability 8.0 (`cuda:sm_80`,
Ampere: cp.async, ldmatrix, mma.sync), 8.9 (`cuda:sm_89`, Ada: also fp8
conversions, PTX 8.1) and 9.0a (`cuda:sm_90a`, Hopper: also TMA, mbarriers
and wgmma).

Programs reach the GPU through the `hw` dialect. The pipeline, stage by
stage:

* `nn`: operator-level simplification (the shared front end's first stage);
* `fused`: composites decomposed and the nn ops partitioned into fusion
  groups (`nn-decompose`, `nn-fuse`: the shared front end's second stage);
* `hw`: the hardware level: every fusion group becomes one hw kernel
  (`convert-nn-to-hw`: f16/bf16 matmuls with their epilogues on tensor
  cores, elementwise groups as grid-stride kernels, reduction groups such
  as softmax, layer_norm and rms_norm as row kernels), pipelining annotations are realised
  (`hw-pipeline`), the host code is bufferized (results as
  out-parameters), and the kernels are checked against the architecture
  (`hw-check`: shared memory, alignment, MMA shapes, features) and for the
  hazards of their synchronisation (`hw-check-hazards`). Its output is an editable
  checkpoint: `--emit=hw` prints hw IR that `lamina-compile` and
  `lamina-run` take as input;
* `gpu`: the kernels distributed over threads (`convert-hw-to-nvgpu`):
  gpu, nvgpu and nvvm ops in a `gpu.module`, launched by
  `gpu.launch_func`;
* `llvm-mlir`: upstream's NVVM lowering of the device and host code to
  the LLVM and NVVM dialects (isolated: an upstream pass that aborts is a
  located error, not the end of the compiler);
* `ptx`: the GPU module's PTX (`gpu-module-to-binary`, no CUDA toolkit
  needed);
* `manifest`: a JSON description of the kernels: each launch's grid,
  block, dynamic shared memory, argument layout and TMA descriptors, and
  where ptxas is present, each kernel's registers, spills, stack frame
  and static shared memory (`ptxas -v`) with the blocks an SM holds at
  once and what limits them (registers, shared memory, threads), so that
  resource contracts (no spills, occupancy) are checkable without a GPU;
  a kernel no SM can hold (too many registers for its block) is an
  error;
* `cubin` (the default output): the PTX assembled by `ptxas` (the
  optional extra `cuda`, PyPI `nvidia-cuda-nvcc`).

`CUDATarget.compile()` (`lamina.compile(module, target="cuda:sm_90a")`,
`lamina-run --target=cuda:ARCH`) runs the kernels on this machine's GPU
through the CUDA driver API (`lamina.cuda_runtime`), NumPy arrays in and
out; without a driver or a GPU it is a clear error.

Every hw program also runs on the CPU, through the emulation
(`CUDATarget.emulation()`, `lamina-run --target=cuda:sm_80 --emulate`):
after the `hw` stage, `convert-hw-to-loops` turns the kernels into host
loops and the CPU target's MLIR stages from bufferization on compile them;
arrays in global memory are the kernels' arguments, passed in place.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import tempfile
import time

from mlir import ir
from mlir.dialects import gpu

from lamina.cuda_runtime import (CUDAFunction, GPUProgram, HostProgram, driver, memory_plan_of,
                                 parse_manifest)
from lamina.diagnostics import CompileError, Diagnostic
from lamina.gpu_emulation import EmulatedCUDAFunction, compile_emulated
from lamina.lowering.nn_to_hw import ConvertNNToHW
from lamina.lowering.hw_to_nvgpu import LAUNCHES_ATTRIBUTE, ConvertHWToNVGPU
from lamina.passes.func_copy_repeated_results import FuncCopyRepeatedResults
from lamina.passes.gpu_extern_dynamic_shared_memory import GPUExternDynamicSharedMemory
from lamina.pass_pipeline import parse_tool_diagnostics, run_in_mlir_opt
from lamina.pipeline import Pipeline, Stage
from lamina.runtime import clone_module, entry_signature
from lamina.targets import Target, register_target
from lamina.targets.frontend import frontend_stages
from lamina.targets.nvidia import architecture, occupancy, shared_alignment


@functools.lru_cache(maxsize=None)
def _cuda_tool(name: str) -> str | None:
    """A CUDA tool from the PyPI CUDA wheels (`nvidia/cu*/bin` or
    `nvidia/cuda_*/bin`), else from PATH; None when there is none."""
    try:
        import nvidia
        roots = list(nvidia.__path__)
    except ImportError:
        roots = []
    for root in roots:
        for folder in sorted(os.listdir(root), reverse=True):
            candidate = os.path.join(root, folder, "bin", name)
            if os.access(candidate, os.X_OK):
                return candidate
    return shutil.which(name)


def find_ptxas() -> str | None:
    """ptxas (PyPI nvidia-cuda-nvcc); None when there is none."""
    return _cuda_tool("ptxas")


def find_nvdisasm() -> str | None:
    """nvdisasm, the disassembler of cubins (PyPI nvidia-cuda-nvdisasm);
    None when there is none."""
    return _cuda_tool("nvdisasm")


def sass_instructions(cubin: str) -> dict[str, int]:
    """Per kernel of a cubin file, the number of machine (SASS)
    instructions nvdisasm lists, the NOPs that pad the code excluded;
    empty without nvdisasm."""
    nvdisasm = find_nvdisasm()
    if nvdisasm is None:
        return {}
    result = subprocess.run([nvdisasm, "-c", cubin], capture_output=True, text=True)
    if result.returncode != 0:
        return {}
    counts: dict[str, int] = {}
    current = None
    for line in result.stdout.splitlines():
        found = re.match(r"\s*\.section\s+\.text\.([^,\s]+)", line)
        if found:
            current = found.group(1)
            counts[current] = 0
            continue
        instruction = re.match(r"\s*/\*[0-9a-f]+\*/\s+(.*?)\s*;", line)
        if current is not None and instruction and instruction.group(1) != "NOP":
            counts[current] += 1
    return counts


# The host code of hw programs on memrefs, results as out-parameters (the
# CPU target's calling convention, kept by the emulation).
BUFFERIZE = ("one-shot-bufferize{bufferize-function-boundaries "
             "function-boundary-type-conversion=identity-layout-map}")

# Upstream's lowering of GPU and host code to the LLVM and NVVM dialects
# (gpu-lower-to-nvvm-pipeline without its last step, the serialization;
# the NVVM target is attached by convert-hw-to-nvgpu).
NVVM_LOWERING = [
    "convert-nvgpu-to-nvvm",
    "convert-vector-to-scf",
    "convert-scf-to-cf",
    "convert-nvvm-to-llvm",
    "expand-strided-metadata",
    "finalize-memref-to-llvm",
    "convert-func-to-llvm",
    "lower-affine",
    "convert-arith-to-llvm",
    "convert-index-to-llvm",
    "canonicalize",
    "cse",
    "gpu.module(convert-gpu-to-nvvm, canonicalize, cse, reconcile-unrealized-casts)",
    "gpu-to-llvm",
    "convert-math-to-llvm",
    "canonicalize",
    "cse",
    "reconcile-unrealized-casts",
]


class SerializeToPTX:
    """The PTX of a lowered module's GPU module: upstream's
    gpu-module-to-binary (format isa), run in mlir-opt."""

    argument = "gpu-module-to-ptx"

    def __call__(self, module: ir.Module) -> str:
        text = module.operation.get_asm(enable_debug_info=True, print_generic_op_form=True)
        result = run_in_mlir_opt(["gpu-module-to-binary{format=isa}"], text)
        if result.returncode != 0:
            raise CompileError(parse_tool_diagnostics(result.stderr) or [Diagnostic(
                None, 0, 0, "error", f"gpu-module-to-binary failed: {result.stderr[-2000:]}")])
        with ir.Context() as context:
            context.allow_unregistered_dialects = True
            serialized = ir.Module.parse(result.stdout)
            for op in serialized.body.operations:
                if op.operation.name == "gpu.binary":
                    objects = ir.ArrayAttr(op.operation.attributes["objects"])
                    return gpu.ObjectAttr(objects[0]).object.decode()
        raise CompileError([Diagnostic(None, 0, 0, "error", "the module has no GPU code "
                                                            "(no hw kernel)")])

    def __str__(self) -> str:
        return self.argument


class Ptxas:
    """Assembles PTX into a cubin with ptxas for an architecture."""

    def __init__(self, chip: str):
        self.chip = chip
        self.argument = "ptxas"

    def __call__(self, ptx: str) -> bytes:
        ptxas = find_ptxas()
        if ptxas is None:
            raise CompileError([Diagnostic(None, 0, 0, "error", "a cubin needs ptxas: install "
                                           "Lamina's optional extra 'cuda' (PyPI "
                                           "nvidia-cuda-nvcc)")])
        with tempfile.TemporaryDirectory() as folder:
            source, cubin = os.path.join(folder, "kernels.ptx"), os.path.join(folder, "k.cubin")
            with open(source, "w") as f:
                f.write(ptx)
            result = subprocess.run([ptxas, f"-arch={self.chip}", source, "-o", cubin],
                                    capture_output=True, text=True)
            if result.returncode != 0:
                raise CompileError([Diagnostic(None, 0, 0, "error", "ptxas rejected the PTX: "
                                               + result.stderr.strip()[-2000:])])
            with open(cubin, "rb") as f:
                return f.read()

    def __str__(self) -> str:
        return f"ptxas -arch={self.chip}"


def ptxas_resources(ptx: str, chip: str) -> dict[str, dict] | None:
    """Per kernel, the resources ptxas reports (`-v`): registers, spill
    stores and loads, stack frame and static shared memory, in bytes where
    they are sizes, and, where nvdisasm is present, the number of machine
    instructions (`sass_instructions`, see `sass_instructions`); None
    without ptxas."""
    if find_ptxas() is None:
        return None
    with tempfile.TemporaryDirectory() as folder:
        source, cubin = os.path.join(folder, "kernels.ptx"), os.path.join(folder, "k.cubin")
        with open(source, "w") as f:
            f.write(ptx)
        result = subprocess.run([find_ptxas(), f"-arch={chip}", "-v", source, "-o", cubin],
                                capture_output=True, text=True)
        instructions = sass_instructions(cubin) if result.returncode == 0 else {}
    if result.returncode != 0:
        raise CompileError([Diagnostic(None, 0, 0, "error", "ptxas rejected the PTX: "
                                       + result.stderr.strip()[-2000:])])
    resources: dict[str, dict] = {}
    current = None
    for line in result.stderr.splitlines():
        found = re.search(r"Compiling entry function '([^']+)'", line)
        if found:
            current = resources.setdefault(found.group(1), {})
            continue
        if current is None:
            continue
        found = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes "
                          r"spill loads", line)
        if found:
            current.update(stack_frame=int(found.group(1)), spill_stores=int(found.group(2)),
                           spill_loads=int(found.group(3)))
        found = re.search(r"Used (\d+) registers", line)
        if found:
            current["registers"] = int(found.group(1))
            shared = re.search(r"(\d+) bytes smem", line)
            current["static_shared_memory"] = int(shared.group(1)) if shared else 0
    for name, count in instructions.items():
        if name in resources:
            resources[name]["sass_instructions"] = count
    return resources


def launch_records(module: ir.Module) -> list[dict]:
    """The launches convert-hw-to-nvgpu records on `module` (none if it
    has no GPU code): each kernel's grid, block, dynamic shared memory,
    arguments and TMA descriptors."""
    attributes = module.operation.attributes
    if LAUNCHES_ATTRIBUTE not in attributes:
        return []
    launches = []
    for record in ir.ArrayAttr(attributes[LAUNCHES_ATTRIBUTE]):
        record = ir.DictAttr(record)
        launches.append({
            "kernel": ir.StringAttr(record["kernel"]).value,
            "grid": list(ir.DenseI64ArrayAttr(record["grid"])),
            "block": list(ir.DenseI64ArrayAttr(record["block"])),
            "dynamic_shared_memory": ir.IntegerAttr(record["dynamic_shared_memory"]).value,
            "arguments": [ir.StringAttr(a).value for a in ir.ArrayAttr(record["arguments"])],
            "tma_descriptors": [{
                "argument": ir.IntegerAttr(d["argument"]).value,
                "box": list(ir.DenseI64ArrayAttr(d["box"])),
                "dtype": ir.StringAttr(d["dtype"]).value,
                "swizzle_bytes": ir.IntegerAttr(d["swizzle_bytes"]).value,
            } for d in map(ir.DictAttr, ir.ArrayAttr(record["tma_descriptors"]))],
        })
    return launches


def memory_plans(module: ir.Module) -> dict[str, dict[str, int]]:
    """The memory plans of `module`'s host functions (`memory_plan_of`), by name."""
    plans = {}
    for op in module.body.operations:
        op = op.operation
        plan = memory_plan_of(op) if op.name in ("func.func", "llvm.func") else None
        if plan is not None:
            plans[ir.StringAttr(op.attributes["sym_name"]).value] = plan
    return plans


class KernelManifest:
    """The kernel manifest (JSON) of a lowered module: its launches and,
    where ptxas is present, each kernel's resources."""

    def __init__(self, target: "CUDATarget"):
        self.target = target
        self.argument = "kernel-manifest"

    def __call__(self, module: ir.Module) -> str:
        attributes = module.operation.attributes
        if LAUNCHES_ATTRIBUTE not in attributes:
            raise CompileError([Diagnostic(None, 0, 0, "error", "the module has no GPU code "
                                                                "(no hw kernel)")])
        launches = launch_records(module)
        chip = self.target.arch.name
        resources = ptxas_resources(SerializeToPTX()(module), chip)
        for launch in launches:
            found = (resources or {}).get(launch["kernel"])
            if found is None or "registers" not in found:
                continue
            threads = launch["block"][0] * launch["block"][1] * launch["block"][2]
            found.update(occupancy(self.target.arch, found["registers"], threads,
                                   found["static_shared_memory"]
                                   + launch["dynamic_shared_memory"]))
            if found["blocks_per_sm"] == 0:
                raise CompileError([Diagnostic(None, 0, 0, "error", (
                    f"kernel {launch['kernel']} cannot launch on {chip}: a block of "
                    f"{threads} threads with {found['registers']} registers each and "
                    f"{found['static_shared_memory'] + launch['dynamic_shared_memory']} bytes "
                    f"of shared memory exceeds an SM's {found['limited_by']}"))])
        manifest = {"target": self.target.name, "ptx_version": self.target.arch.ptx,
                    "memory_plans": memory_plans(module),
                    "launches": launches,
                    "kernels": {name: resources.get(name) if resources is not None else None
                                for name in sorted({l["kernel"] for l in launches})}}
        return json.dumps(manifest, indent=2) + "\n"

    def __str__(self) -> str:
        return self.argument


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
        front = frontend_stages()
        return front[:2] + [Stage("hw", [
            ConvertNNToHW(chip=self.arch.name),
            "hw-pipeline",
            BUFFERIZE,
            FuncCopyRepeatedResults(),
            "buffer-results-to-out-params{hoist-static-allocs modify-public-functions}",
            "canonicalize",
            "cse",
            "hw-plan-memory",
            f"hw-check{{chip={self.arch.name}}}",
            "hw-check-hazards",
        ], description="hw kernels on memrefs, pipelined and checked")]

    def pipeline(self) -> Pipeline:
        chip = self.arch.name
        return Pipeline(self.hw_stages() + [
            Stage("gpu", [
                ConvertHWToNVGPU(chip=chip),
                "cpu-widen-bool-memrefs",
                "canonicalize",
                "cse",
            ], description="kernels distributed over threads: gpu, nvgpu, nvvm"),
            Stage("llvm-mlir", list(NVVM_LOWERING) + [
                GPUExternDynamicSharedMemory(alignment=shared_alignment(chip))], isolated=True,
                  description="the LLVM and NVVM dialects"),
            Stage("ptx", [SerializeToPTX()], kind="ptx", description="the kernels' PTX"),
            Stage("manifest", [KernelManifest(self)], kind="json", input="llvm-mlir",
                  description="the kernels' launches and resources"),
            Stage("cubin", [Ptxas(chip)], kind="cubin", input="ptx",
                  description="the kernels assembled"),
        ], target=self)

    def emulation(self) -> "EmulatedCUDATarget":
        """The same hw programs run on the CPU (see the module docstring)."""
        return EmulatedCUDATarget(self)

    def build(self, module: ir.Module, entry: str | None = None,
              pipeline: Pipeline | None = None) -> GPUProgram:
        """What the GPU runtime loads for the entry function: its host
        program, kernel manifest, PTX and (with ptxas) cubin. Needs no GPU;
        `module` is not modified. Raises CompileError."""
        module = clone_module(module)
        name, inputs, results = entry_signature(module, entry)
        pipeline = pipeline or self.pipeline()
        pipeline.run(module, until="hw")
        host = HostProgram.from_module(module, name)
        ptx = pipeline.run(module, start="gpu", until="ptx")
        manifest = pipeline.run_stage("manifest", module)
        cubin = pipeline.run_stage("cubin", ptx) if find_ptxas() is not None else None
        return GPUProgram(name, inputs, results, host, parse_manifest(manifest), ptx, cubin,
                          self.arch.name, self.arch.specific, module, json.loads(manifest))

    def compile(self, module: ir.Module, entry: str | None = None,
                pipeline: Pipeline | None = None, graphs: bool | None = None) -> CUDAFunction:
        """The entry function with its kernels on this machine's GPU,
        through the CUDA driver (see `lamina.cuda_runtime`): the cubin
        when the GPU is of the target's architecture, else the PTX, which
        the driver compiles for a newer GPU; repeated calls replay CUDA
        graphs unless `graphs` is False (default: LAMINA_CUDA_GRAPHS, on).
        Raises CUDAError (a CompileError) when there is no driver or GPU,
        or the GPU cannot run the target's code."""
        start = time.perf_counter()
        driver()
        program = self.build(module, entry, pipeline)
        return CUDAFunction(program, time.perf_counter() - start, graphs=graphs)


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
        ] + [cpu.stage(name) for name in cpu.mlir_stages[cpu.mlir_stages.index("bufferized"):]],
            target=self)

    def compile(self, module: ir.Module, entry: str | None = None,
                pipeline: Pipeline | None = None, graphs: bool | None = None
                ) -> EmulatedCUDAFunction:
        """The entry function, its launch graph run on the CPU (see
        `lamina.gpu_emulation`); `graphs` is accepted as the GPU's
        compile takes it and changes nothing (the CPU has no CUDA graphs)."""
        return compile_emulated(self, module, entry, pipeline or self.pipeline())


@register_target("cuda")
def _cuda_target(arch: str | None) -> Target:
    return CUDATarget(arch)
