"""The CPU target: x86-64 CPUs (the host by default), JIT-compiled through
MLIR's ExecutionEngine or compiled ahead of time to object files.

The CPU pipeline, stage by stage (the first two are the shared front end,
lamina.targets.frontend):

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

from mlir import ir

from lamina.passes.cpu_check_lowered_to_llvm import CPUCheckLoweredToLLVM
from lamina.passes.cpu_hide_implementations import CPUHideImplementations
from lamina.passes.cpu_protect_inputs import CPUProtectInputs
from lamina.passes.cpu_request_c_interface import CPURequestCInterface
from lamina.passes.cpu_vectorize import CPUVectorize
from lamina.passes.cpu_widen_bool_memrefs import CPUWidenBoolMemrefs
from lamina.pipeline import Pipeline, Stage
from lamina.runtime import CompiledFunction, jit_compile
from lamina.targets import Target, register_target
from lamina.targets.frontend import frontend_stages
from lamina.targets.host import detect_host
from lamina.targets.llvm_tools import LLC, Opt, TranslateToLLVMIR
from lamina.toolchain import library_path

BUFFERIZE = ("one-shot-bufferize{bufferize-function-boundaries "
             "function-boundary-type-conversion=identity-layout-map}")

# MLIR's runner utilities (memrefCopy, printing), which lowered code may call.
RUNTIME_LIBRARIES = ("libmlir_c_runner_utils.so", "libmlir_runner_utils.so")


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

    def runtime_libraries(self) -> list[str]:
        return [library_path(name) for name in RUNTIME_LIBRARIES]

    def pipeline(self) -> Pipeline:
        return Pipeline(frontend_stages() + [
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
                pipeline: Pipeline | None = None) -> CompiledFunction:
        return jit_compile(module, entry=entry, pipeline=pipeline or self.pipeline(),
                           shared_libs=self.runtime_libraries(), opt_level=self.opt_level)


@register_target("cpu")
def _cpu_target(arch: str | None) -> Target:
    return CPUTarget(cpu=arch)
