"""Compilation targets.

A target knows its default pipeline (`pipeline()`, editable named stages),
how to produce the artifact of any stage (`emit(module, stage)`) and, where
the machine can run code, how to compile a module into a Python callable
(`compile(module, entry)`). Targets are named by a spec string: `"cpu"`
(the host), `"cpu:znver4"` (another x86 CPU), and later `"cuda:sm_80"`;
`get_target(spec)` looks the kind up in a registry that new kinds join with
`@register_target("kind")`.

The CPU pipeline, stage by stage:

* `nn`: operator-level simplification (`nn-canonicalize`);
* `linalg`: `convert-nn-to-linalg`, then upstream cleanup and elementwise
  fusion on tensors;
* `bufferized`: one-shot bufferization across function boundaries with
  identity layouts; results become caller-allocated out-parameters (the C
  ABI below), buffers are freed by ownership-based deallocation. Arguments
  of public functions are read-only, so inputs are never written
  (`cpu-protect-inputs`);
* `vector`: named linalg ops become generics; one loop of each generic
  (the innermost contiguous one, in steps of 16, 8 or 4) is tiled and
  vectorized where upstream's vectorizer can (`cpu-vectorize`);
* `loops`: the remaining linalg ops and the vector ops' tile loops become
  scf loops over memrefs;
* `llvm-mlir`: the LLVM dialect. Public functions get the C interface
  (`cpu-request-c-interface`), i1 buffers are stored as bytes
  (`cpu-widen-bool-memrefs`), f16/bf16 arithmetic and math are done in
  f32 (rounded after each op), math functions become LLVM intrinsics or
  libm calls; only the C interfaces stay external
  (`cpu-hide-implementations`), and an op left unlowered is reported
  (`cpu-check-lowered-to-llvm`);
* `llvm` (LLVM IR text, optimized by `opt -O3` as the JIT does), `asm`
  and `obj` (`llc` from the pinned wheel, `-O3`, position-independent).
  Both tools run in subprocesses, for the target's triple, CPU and features.

C ABI of a compiled public function `@f(%a: tensor<..>, ...) -> (tensor<..>, ...)`:
`void _mlir_ciface_f(memref_t *a, ..., memref_t *result0, ...)`, where each
`memref_t` is MLIR's descriptor `{T *allocated, T *aligned, int64_t offset,
int64_t sizes[rank], int64_t strides[rank]}` of a contiguous row-major
buffer, and the caller allocates the results. i1 elements are bytes.
"""

from __future__ import annotations

import ctypes
import functools
import os
import platform
import subprocess
from dataclasses import dataclass
from typing import Callable, ClassVar

from mlir import ir

from lamina.diagnostics import CompileError, Diagnostic
from lamina.passes.cpu_check_lowered_to_llvm import CPUCheckLoweredToLLVM, check_llvm_dialect
from lamina.passes.cpu_hide_implementations import CPUHideImplementations
from lamina.passes.cpu_protect_inputs import CPUProtectInputs
from lamina.passes.cpu_request_c_interface import CPURequestCInterface
from lamina.passes.cpu_vectorize import CPUVectorize
from lamina.passes.cpu_widen_bool_memrefs import CPUWidenBoolMemrefs
from lamina.pipeline import Pipeline, Stage
from lamina.toolchain import library_path, tool_path

# ---------------------------------------------------------------------------
# Targets and their registry.


class Target:
    """Base of compilation targets."""

    kind: ClassVar[str] = ""

    @property
    def name(self) -> str:
        return self.kind

    def pipeline(self) -> Pipeline:
        """A fresh copy of the target's default pipeline."""
        raise NotImplementedError

    @property
    def stages(self) -> list[str]:
        return self.pipeline().stages

    def emit(self, module: ir.Module, stage: str, pipeline: Pipeline | None = None,
             print_after_all: bool = False):
        """Runs the pipeline on `module` (in place) through `stage` and
        returns its product: the module, text or bytes."""
        return (pipeline or self.pipeline()).run(module, until=stage,
                                                 print_after_all=print_after_all)

    def compile(self, module: ir.Module, entry: str | None = None,
                pipeline: Pipeline | None = None):
        """A Python callable running the function `entry` of `module`."""
        raise NotImplementedError(f"target '{self.name}' cannot run programs from Python")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


_REGISTRY: dict[str, Callable[[str | None], Target]] = {}


def register_target(kind: str):
    """Registers a factory `f(arch_or_None) -> Target` for specs `kind[:arch]`."""
    def decorate(factory):
        _REGISTRY[kind] = factory
        return factory
    return decorate


def get_target(spec: str | Target = "cpu") -> Target:
    """The target of a spec such as `"cpu"` or `"cuda:sm_80"` (a Target is
    returned as is). Raises ValueError for an unknown kind."""
    if isinstance(spec, Target):
        return spec
    kind, _, arch = str(spec).partition(":")
    if kind not in _REGISTRY:
        raise ValueError(f"unknown target '{spec}' (known: {', '.join(sorted(_REGISTRY))})")
    return _REGISTRY[kind](arch or None)


def available_targets() -> list[str]:
    return sorted(_REGISTRY)


# ---------------------------------------------------------------------------
# The host.


@dataclass(frozen=True)
class HostInfo:
    """The machine code generation is for: LLVM target triple, CPU name and
    feature list (`+avx512f`, `-amx-int8`, ...)."""

    triple: str
    cpu: str
    features: tuple[str, ...]

    def has(self, feature: str) -> bool:
        return f"+{feature}" in self.features


@functools.lru_cache(maxsize=None)
def detect_host() -> HostInfo:
    """The host as LLVM sees it (through the C API of the wheel's libLLVM),
    else from /proc/cpuinfo."""
    try:
        return _detect_with_llvm()
    except (OSError, AttributeError, FileNotFoundError):
        return _detect_from_cpuinfo()


def _detect_with_llvm() -> HostInfo:
    llvm = ctypes.CDLL(library_path("libLLVM.so"))

    def message(function_name: str) -> str:
        function = getattr(llvm, function_name)
        function.restype = ctypes.c_void_p
        pointer = function()
        try:
            return ctypes.string_at(pointer).decode()
        finally:
            llvm.LLVMDisposeMessage(ctypes.c_void_p(pointer))

    features = tuple(sorted(f for f in message("LLVMGetHostCPUFeatures").split(",") if f))
    return HostInfo(message("LLVMGetDefaultTargetTriple"), message("LLVMGetHostCPUName"),
                    features)


# /proc/cpuinfo flag -> LLVM feature, where the names differ.
_CPUINFO_FEATURES = {"sse4_1": "sse4.1", "sse4_2": "sse4.2", "pni": "sse3", "bmi1": "bmi",
                     "pclmulqdq": "pclmul", "abm": "lzcnt", "sha_ni": "sha",
                     "avx512_bf16": "avx512bf16", "avx512_vnni": "avx512vnni",
                     "avx512_vbmi2": "avx512vbmi2", "avx512_bitalg": "avx512bitalg",
                     "avx512_vpopcntdq": "avx512vpopcntdq", "avx512_fp16": "avx512fp16"}
_KNOWN_FEATURES = {"sse", "sse2", "sse3", "ssse3", "sse4.1", "sse4.2", "popcnt", "avx", "avx2",
                   "fma", "f16c", "bmi", "bmi2", "lzcnt", "movbe", "aes", "pclmul", "sha", "adx",
                   "avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl", "avx512ifma",
                   "avx512vbmi", "avx512vbmi2", "avx512vnni", "avx512bitalg",
                   "avx512vpopcntdq", "avx512bf16", "avx512fp16", "cx16", "xsave"}


def _detect_from_cpuinfo() -> HostInfo:
    flags: set[str] = set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
    except OSError:
        pass
    features = sorted({_CPUINFO_FEATURES.get(f, f) for f in flags} & _KNOWN_FEATURES)
    machine = platform.machine() or "x86_64"
    return HostInfo(f"{machine}-unknown-linux-gnu", "x86-64" if machine == "x86_64" else "generic",
                    tuple(f"+{f}" for f in features))


# ---------------------------------------------------------------------------
# Artifact stages: LLVM IR, assembly, object files.


class TranslateToLLVMIR:
    """Translates an LLVM-dialect module to LLVM IR text."""

    argument = "mlir-to-llvmir"

    def __init__(self, triple: str):
        self.triple = triple

    def __call__(self, module: ir.Module) -> str:
        from mlir.dialects import llvm
        check_llvm_dialect(module)
        with module.context:
            module.operation.attributes["llvm.target_triple"] = ir.StringAttr.get(self.triple)
            try:
                return llvm.translate_module_to_llvmir(module.operation)
            except ir.MLIRError as error:
                from lamina.diagnostics import from_mlir
                raise CompileError([from_mlir(d) for d in error.error_diagnostics]) from None

    def __str__(self) -> str:
        return self.argument


def run_llvm_tool(command: list[str], input_bytes: bytes) -> bytes:
    """Runs an LLVM tool in a subprocess (an LLVM fatal error ends that
    process, not this one); raises CompileError with its stderr."""
    result = subprocess.run(command, input=input_bytes, capture_output=True)
    if result.returncode != 0:
        detail = result.stderr.decode(errors="replace").strip()
        how = (f"exited with code {result.returncode}" if result.returncode > 0
               else f"was killed by signal {-result.returncode}")
        tool = os.path.basename(command[0])
        raise CompileError([Diagnostic(None, 0, 0, "error", f"{tool} {how}: {detail[-2000:]}")])
    return result.stdout


class _MachineTool:
    """An LLVM tool run for a triple, CPU and feature list."""

    tool = ""

    def __init__(self, triple: str, cpu: str, features: tuple[str, ...], opt_level: int = 3):
        self.triple, self.cpu, self.features, self.opt_level = triple, cpu, features, opt_level

    def machine_flags(self) -> list[str]:
        flags = [f"-mtriple={self.triple}", f"-mcpu={self.cpu}"]
        if self.features:
            flags.append(f"-mattr={','.join(self.features)}")
        return flags


class Opt(_MachineTool):
    """Optimizes LLVM IR text with the wheel's `opt -O3` (what the JIT does
    in-process), for the target machine."""

    argument = "opt"

    def command(self) -> list[str]:
        return [tool_path("opt"), f"-O{self.opt_level}", *self.machine_flags(), "-S", "-o", "-"]

    def __call__(self, llvm_ir: str) -> str:
        return run_llvm_tool(self.command(), llvm_ir.encode()).decode()

    def __str__(self) -> str:
        return f"opt -O{self.opt_level} -mcpu={self.cpu}"


class LLC(_MachineTool):
    """Compiles LLVM IR text to assembly or a position-independent object
    file with the wheel's `llc`."""

    def __init__(self, triple: str, cpu: str, features: tuple[str, ...], filetype: str,
                 opt_level: int = 3):
        super().__init__(triple, cpu, features, opt_level)
        self.filetype = filetype
        self.argument = f"llc-{filetype}"

    def command(self) -> list[str]:
        return [tool_path("llc"), f"-O{self.opt_level}", *self.machine_flags(),
                "-relocation-model=pic", f"-filetype={self.filetype}", "-o", "-"]

    def __call__(self, llvm_ir: str):
        output = run_llvm_tool(self.command(), llvm_ir.encode())
        return output if self.filetype == "obj" else output.decode()

    def __str__(self) -> str:
        return f"llc -O{self.opt_level} -mcpu={self.cpu} -filetype={self.filetype}"


# ---------------------------------------------------------------------------
# The CPU target.


BUFFERIZE = ("one-shot-bufferize{bufferize-function-boundaries "
             "function-boundary-type-conversion=identity-layout-map}")


class CPUTarget(Target):
    """x86-64 CPUs (the host by default), JIT-compiled through MLIR's
    ExecutionEngine or compiled ahead of time to object files."""

    kind = "cpu"

    def __init__(self, cpu: str | None = None, features: tuple[str, ...] | None = None,
                 triple: str | None = None, opt_level: int = 3):
        host = detect_host()
        self.triple = triple or host.triple
        self.cpu = cpu or host.cpu
        if features is None:
            features = host.features if self.cpu == host.cpu else ()
        self.features = tuple(features)
        self.opt_level = opt_level

    @property
    def name(self) -> str:
        return "cpu" if self.cpu == detect_host().cpu else f"cpu:{self.cpu}"

    def pipeline(self) -> Pipeline:
        return Pipeline([
            Stage("nn", [
                "nn-canonicalize",
            ], description="operators on tensors"),
            Stage("linalg", [
                "convert-nn-to-linalg",
                "canonicalize",
                "linalg-fuse-elementwise-ops",
                "cse",
                "canonicalize",
            ], description="upstream linalg/tensor/arith/math on tensors"),
            Stage("bufferized", [
                CPUProtectInputs(),
                BUFFERIZE,
                "buffer-results-to-out-params{hoist-static-allocs modify-public-functions}",
                "canonicalize",
                "ownership-based-buffer-deallocation",
                "canonicalize",
                "buffer-deallocation-simplification",
                "bufferization-lower-deallocations",
                "cse",
                "canonicalize",
            ], description="linalg on memrefs; results are out-parameters"),
            Stage("vector", [
                "linalg-generalize-named-ops",
                CPUVectorize(),
                "canonicalize",
                "cse",
            ], description="an innermost loop of each linalg op on vectors"),
            Stage("loops", [
                "func.func(convert-linalg-to-loops)",
                "func.func(lower-vector-multi-reduction)",
                "convert-vector-to-scf{full-unroll=true}",
                "lower-affine",
                "canonicalize",
                "cse",
            ], description="scf loops over memrefs"),
            Stage("llvm-mlir", [
                CPURequestCInterface(),
                CPUWidenBoolMemrefs(),
                "func.func(arith-emulate-unsupported-floats{source-types=bf16,f16 target-type=f32})",
                "func.func(math-extend-to-supported-types{target-type=f32})",
                "arith-expand{include-bf16}",
                "expand-strided-metadata",
                "lower-affine",
                "convert-vector-to-llvm",
                "finalize-memref-to-llvm",
                "convert-math-to-llvm",
                "convert-math-to-libm",
                "convert-scf-to-cf",
                "convert-to-llvm",
                "reconcile-unrealized-casts",
                CPUHideImplementations(),
                "canonicalize",
                CPUCheckLoweredToLLVM(),
            ], description="the LLVM dialect"),
            Stage("llvm", [
                TranslateToLLVMIR(self.triple),
                Opt(self.triple, self.cpu, self.features, self.opt_level),
            ], kind="llvm", description="optimized LLVM IR"),
            Stage("asm", [LLC(self.triple, self.cpu, self.features, "asm", self.opt_level)],
                  kind="asm", input="llvm", description="assembly"),
            Stage("obj", [LLC(self.triple, self.cpu, self.features, "obj", self.opt_level)],
                  kind="obj", input="llvm", description="relocatable object file"),
        ], target=self)

    def compile(self, module: ir.Module, entry: str | None = None,
                pipeline: Pipeline | None = None):
        from lamina.runtime import jit_compile
        return jit_compile(module, entry=entry, pipeline=pipeline or self.pipeline(),
                           opt_level=self.opt_level)


@register_target("cpu")
def _cpu_target(arch: str | None) -> Target:
    return CPUTarget(cpu=arch)
