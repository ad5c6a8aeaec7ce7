"""The CPU target: x86-64 and AArch64 CPUs (the host by default),
JIT-compiled through MLIR's ExecutionEngine or compiled ahead of time to
object files.

The CPU pipeline, stage by stage (the first two are the shared front end,
lamina.targets.frontend):

* `nn`: operator-level simplification (`nn-canonicalize`); per-channel
  scales (batch norms) folded into the weights of the convolutions and
  matmuls before them (`nn-fold-batch-norm`), ops of constants evaluated
  (`nn-fold-constants`), and, for weights bound by `bind()`, what depends
  on them alone moved into an initialiser (`func-split-initializer`);
* `partitioned`: a program with `shard` annotations becomes one rank's
  program (`nn-shard-partition`: linalg with shard collectives; see
  lamina.sharding); others are left as they are. `compile()` runs a
  sharded program whole in one process (`nn-shard-erase` instead) unless
  asked for a distributed run. In `bufferized`, collectives become MPI
  calls (`convert-shard-collectives-to-mpi`, upstream `convert-shard-to-mpi`
  after deallocation, `shard-finalize-mpi`);
* `layout`: each region of 4-D activations stored NCHW or NHWC, whichever
  leaves fewer transposes, convolutions and pooling computing in it
  (`nn-assign-layouts`);
* `fused`: composites decomposed (`nn-decompose`), f16 and bf16
  contractions and convolutions computed as f32 ones on widened operands
  (`cpu-widen-contractions`), fusion groups formed (`nn-fuse`);
* `linalg`: `convert-nn-to-linalg` (attention flash-style, in query tiles
  of the register tile's rows and key tiles of 128: `attention-query-tile`),
  then upstream cleanup and elementwise fusion on tensors;
* `schedule`: convolutions rewritten for their schedules (NCHW ones
  channels-last, `cpu-convolutions-to-channels-last`, cancelling the
  transposes around those the program computes channels-last, whose 1x1
  ones become matrix products of pixels by filters; the other 1x1 ones
  into contractions in NCHW, `cpu-pointwise-convolutions-to-contractions`; grouped
  ones into sums over their taps, `cpu-grouped-convolutions-to-taps`;
  padded channels-last depthwise ones, with their epilogues, into an
  interior that reads the input in place and border parts that pad what
  they read, `cpu-split-padded-convolutions`),
  the filter transposes of bound weights moved into the initialiser
  (`func-split-initializer` again), the
  tuned choices of the tuning cache written on their groups
  (lamina.tuning), each group outlined into a private function, groups
  that are the same up to their constants' values sharing one
  (`cpu-outline-fusion-groups`), then a schedule for each fusion group and linalg op,
  chosen by the schedule kinds of `lamina.schedules` and appended to the
  module as a transform-dialect script (`cpu-schedule`; the ops inside the
  loops of flash attention are vectorised in place); this stage prints
  both;
* `tiled`: the script applied (`cpu-apply-schedule`): contractions packed,
  tiled for the caches and unrolled into register tiles, fusion groups
  fused into one loop nest per group, split over threads (`scf.forall`)
  and vectorised, all on tensors; the packing of bound weights moves into
  the initialiser (`func-split-initializer`);
* `bufferized`: one-shot bufferization across function boundaries with
  identity layouts (empty tensors that become a loop's output tile are
  eliminated first, so that the tile is computed in place); results
  become caller-allocated out-parameters (the C
  ABI below), buffers are freed by ownership-based deallocation. Arguments
  of public functions are read-only, so inputs are never written
  (`cpu-protect-inputs`); a buffer returned twice is copied for its
  second result (`func-copy-repeated-results`); a result computed in a
  reshaped buffer is computed in the out-parameter itself
  (`cpu-forward-result-copies`); a function's intermediate buffers share
  one arena allocated per call, placed by their lifetimes
  (`cpu-plan-memory`: resnet50's 131 buffers, 86 MB, in 8 MB);
* `loops`: what no schedule covered becomes scf loops; exp, log, tanh,
  erf and rsqrt on vectors become polynomials (`cpu-approximate-math`),
  and vector ops are lowered for the CPU (`cpu-lower-vectors`: FMAs of outer products,
  horizontal reductions, 1-D transfers); the thread loops become
  `scf.parallel` (one thread: `scf.for`);
* `llvm-mlir`: the LLVM dialect. Parallel loops become OpenMP
  (`convert-scf-to-openmp`, `convert-openmp-to-llvm`) with the dynamic
  schedule (`cpu-dynamic-thread-schedule`). Public functions get the C interface
  (`cpu-request-c-interface`), i1 buffers are stored as bytes
  (`cpu-widen-bool-memrefs`), f16/bf16 arithmetic and math are done in
  f32 (rounded after each op), math functions become LLVM intrinsics or
  libm calls; loops the schedules vectorised are marked so that LLVM's
  loop vectorizer skips them (`cpu-disable-llvm-loop-vectorizer`); only the C interfaces stay external
  (`cpu-hide-implementations`), and an op left unlowered is reported
  (`cpu-check-lowered-to-llvm`);
* (JIT compilation: the constant globals over 4 KiB become external
  globals bound to arrays, lamina.runtime.bind_constant_globals, so that
  LLVM compiles code, not weights);
* `llvm` (LLVM IR text, optimized by `opt -O2` as the JIT does), `asm`
  and `obj` (`llc` from the pinned wheel, `-O2`, position-independent);
  the level is the target spec's `opt=N` (default 2, see
  `DEFAULT_OPT_LEVEL`).
  Both tools run in subprocesses, for the target's triple, CPU and features.

Target specs: `cpu` (the host), `cpu:CPU` (a preset of
lamina.targets.cpu_model, or an x86-64 or AArch64 CPU the pinned LLVM
knows: `llc -mtriple=ARCH -mcpu=help`), features glued on with `+`
(`cpu:aarch64+sve`), then options after commas: `threads=N`, `opt=N`
(LLVM's optimisation level, 0-3) and features `+name` / `-name`
(`cpu:znver4,-avx512f,threads=2`). An unknown CPU,
feature or option is an error when the spec is parsed. A target of
another architecture than the host's (AArch64 on x86-64) compiles the
same pipeline for its triple; `compile()` links the object into an
executable run under emulation (lamina.targets.cross), on one thread.

Threads: all cores by default; `LAMINA_NUM_THREADS`, or the target spec
`cpu:threads=N` (also `cpu:znver4,threads=N`), sets how many. Code for
more than one thread calls the LLVM OpenMP runtime (`libomp.so`, from the
`cmeel-libomp` wheel, which the JIT loads): an object file from
`--emit=obj` compiled for several threads must be linked with `-lomp` (or
with `-l:libomp.so` from `site-packages/cmeel.prefix/lib`); one compiled
with `threads=1` needs no runtime.

C ABI of a compiled public function `@f(%a: tensor<..>, ...) -> (tensor<..>, ...)`:
`void _mlir_ciface_f(memref_t *a, ..., memref_t *result0, ...)`, where each
`memref_t` is MLIR's descriptor `{T *allocated, T *aligned, int64_t offset,
int64_t sizes[rank], int64_t strides[rank]}` of a contiguous row-major
buffer, and the caller allocates the results. i1 elements are bytes.
`lamina-compile --emit=shared` wraps it in a plain C ABI, a pointer per
argument and result (lamina.targets.library).
"""

from __future__ import annotations

import dataclasses
import difflib
import glob
import os
import sys

from mlir import ir

from lamina.passes.cpu_apply_schedule import CPUApplySchedule
from lamina.passes.cpu_convolutions_to_channels_last import CPUConvolutionsToChannelsLast
from lamina.passes.cpu_grouped_convolutions_to_taps import CPUGroupedConvolutionsToTaps
from lamina.passes.cpu_split_padded_convolutions import CPUSplitPaddedConvolutions
from lamina.passes.cpu_vnni_contractions import CPUVNNIContractions
from lamina.passes.cpu_x86_dot_products import CPUX86DotProducts
from lamina.passes.cpu_pointwise_convolutions_to_contractions import (
    CPUPointwiseConvolutionsToContractions)
from lamina.passes.cpu_widen_contractions import CPUWidenContractions
from lamina.passes.cpu_approximate_math import CPUApproximateMath
from lamina.passes.cpu_check_lowered_to_llvm import CPUCheckLoweredToLLVM
from lamina.passes.func_copy_repeated_results import FuncCopyRepeatedResults
from lamina.passes.cpu_flatten_contiguous_reads import CPUFlattenContiguousReads
from lamina.passes.cpu_forward_result_copies import CPUForwardResultCopies
from lamina.passes.cpu_define_bf16_truncation import CPUDefineBF16Truncation
from lamina.passes.cpu_hide_implementations import CPUHideImplementations
from lamina.passes.cpu_lower_vectors import CPULowerVectors
from lamina.passes.cpu_plan_memory import CPUPlanMemory
from lamina.passes.cpu_protect_inputs import CPUProtectInputs
from lamina.passes.cpu_request_c_interface import CPURequestCInterface
from lamina.passes.cpu_outline_fusion_groups import CPUOutlineFusionGroups
from lamina.passes.cpu_schedule import CPUSchedule
from lamina.schedules.convolution import register_tile_pixels
from lamina.passes.cpu_strided_copies_to_loops import CPUStridedCopiesToLoops
from lamina.passes.cpu_widen_bool_memrefs import CPUWidenBoolMemrefs
from lamina.passes.cpu_disable_llvm_loop_vectorizer import CPUDisableLLVMLoopVectorizer
from lamina.passes.cpu_dynamic_thread_schedule import CPUDynamicThreadSchedule
from lamina.passes.nn_assign_layouts import NNAssignLayouts
from lamina.lowering.nn_to_linalg import ConvertNNToLinalg
from lamina.lowering.shard_collectives_to_mpi import ConvertShardCollectivesToMPI
from lamina.passes.func_split_initializer import FuncSplitInitializer
from lamina.passes.nn_fold_batch_norm import NNFoldBatchNorm
from lamina.passes.nn_fold_constants import NNFoldConstants
from lamina.passes.nn_shard_erase import NNShardErase
from lamina.passes.nn_shard_partition import NNShardPartition
from lamina.passes.shard_finalize_mpi import ShardFinalizeMPI
from lamina.cache import cached_compile
from lamina.diagnostics import CompileError
from lamina.pipeline import Pipeline, Stage
from lamina.runtime import (ArrayFunction, CompiledFunction, argument_names, find_entry,
                            jit_compile, jit_compile_bound, request_amx_state,
                            with_shape_function)
from lamina.schedules import attention_tiles
from lamina.targets import Target, register_target
from lamina.targets.cpu_model import (ARCHITECTURE_NAMES, ARCHITECTURES, CPU_PRESETS,
                                      CPUTargetModel, default_threads, host_model, model_for)
from lamina.targets.frontend import frontend_stages
from lamina.targets.host import detect_host, host_architecture, host_architecture_name
from lamina.targets.llvm_tools import LLC, Opt, TranslateToLLVMIR, machine_names
from lamina.toolchain import library_path
from lamina.tuning import TunedChoices

BUFFERIZE = ("one-shot-bufferize{bufferize-function-boundaries "
             "function-boundary-type-conversion=identity-layout-map}")

# LLVM's optimisation level (opt, the JIT, llc) unless the target spec
# says otherwise (`opt=N`). The IR LLVM gets is vectorised and tiled
# already; -O3 over -O2 bought no run time (13 kernels of bench/run.py
# and resnet50 within 1-5% either way, on one thread, min of rounds) and
# cost a third of a model's compile (resnet50: 12.7 -> 8.5 s CPU time).
DEFAULT_OPT_LEVEL = 2

# The most threads a target spec may ask for (far more than any one CPU has).
MAX_THREADS = 1024

# MLIR's runner utilities (memrefCopy, printing), which lowered code may call.
RUNTIME_LIBRARIES = ("libmlir_c_runner_utils.so", "libmlir_runner_utils.so")


def openmp_library() -> str:
    """The LLVM OpenMP runtime of the `cmeel-libomp` wheel. Raises
    FileNotFoundError."""
    for root in sys.path:
        for path in glob.glob(os.path.join(root, "cmeel.prefix", "lib", "libomp.so")):
            return path
    raise FileNotFoundError("cannot find libomp.so (install the cmeel-libomp wheel, a dependency "
                            "of Lamina) for code that runs on several threads")


class CPUTarget(Target):
    """CPUs (the host by default, or a CPU target model of
    lamina.targets.cpu_model: x86-64 and AArch64), JIT-compiled through
    MLIR's ExecutionEngine for the host's architecture, or compiled ahead
    of time to object files (and, for another architecture, linked and run
    under emulation: lamina.targets.cross)."""

    kind = "cpu"

    def __init__(self, cpu: str | None = None, features: tuple[str, ...] | None = None,
                 triple: str | None = None, opt_level: int = DEFAULT_OPT_LEVEL,
                 threads: int | None = None,
                 model: CPUTargetModel | None = None):
        host = detect_host()
        if model is None:
            if cpu is None or cpu == host.cpu:
                model = host_model(host.triple, host.cpu, host.features)
                if features is not None:
                    check_feature_names(features, model.arch)
                    model = dataclasses.replace(model, name=host.cpu).with_features(
                        tuple(features))
            else:
                model = cpu_model_named(cpu)
                if features is not None:
                    check_feature_names(features, model.arch)
                    model = model.with_features(tuple(features))
        self.model = model
        self.host = model.name == "host"
        self.triple = triple or (host.triple if self.host else model.triple)
        self.cpu = model.cpu
        self.features = tuple(model.features)
        self.opt_level = opt_level
        if threads is not None and not 1 <= threads <= MAX_THREADS:
            raise ValueError(f"threads must be at least 1 and at most {MAX_THREADS}, got {threads}")
        if not self.native and threads not in (None, 1):
            raise ValueError(f"threads={threads}: code for {model.architecture_name} compiled on "
                             f"this {host_architecture_name()} machine runs on one thread (no "
                             f"OpenMP runtime for {model.architecture_name} with LLVM's "
                             "__kmpc interface is available here: Debian's libgomp has "
                             "GCC's only)")
        self.threads = threads or (default_threads() if self.native else 1)

    @property
    def native(self) -> bool:
        """Whether code for this target runs on this machine (its
        architecture is the host's)."""
        return self.model.arch == host_architecture()

    @property
    def uses_amx(self) -> bool:
        """Whether code for this target may use AMX's tiles (its model has
        AMX's products), for which the process needs Linux's permission."""
        return any(d.startswith("amx-") for d in self.model.dot_products)

    @property
    def name(self) -> str:
        return "cpu" if self.host else f"cpu:{self.model.name}"

    def runtime_libraries(self) -> list[str]:
        libraries = [library_path(name) for name in RUNTIME_LIBRARIES]
        if self.threads > 1:
            libraries.append(openmp_library())
        return libraries

    @property
    def vector_bits(self) -> int:
        return self.model.vector_bits

    def llvm_options(self) -> tuple[str, ...]:
        """Backend options beyond triple, CPU and features: the SVE vector
        length that code is specific to."""
        if self.model.sve_bits:
            return (f"-aarch64-sve-vector-bits-min={self.model.sve_bits}",
                    f"-aarch64-sve-vector-bits-max={self.model.sve_bits}")
        return ()

    def pipeline(self) -> Pipeline:
        front = frontend_stages()
        model = self.model
        schedule = CPUSchedule(threads=self.threads, vector_bits=model.vector_bits,
                               vector_registers=model.vector_registers,
                               l1_bytes=model.l1_bytes, l2_bytes=model.l2_bytes,
                               scalable=model.scalable,
                               dot_products=",".join(model.dot_products),
                               bf16_dot_products=model.bf16_dot_products)
        pipeline = Pipeline(front[:1] + [
            Stage("partitioned", [
                NNShardPartition(),
            ], description="one rank's program of a sharded nn program, in linalg with shard "
                           "collectives (unchanged without a shard.grid)"),
            Stage("layout", [
                NNAssignLayouts(),
            ], description="4-D activations NCHW or NHWC by region, convolutions and pooling "
                           "computing in their layout"),
        ] + front[1:] + [
            Stage("schedule", [
                CPUConvolutionsToChannelsLast(),
                CPUPointwiseConvolutionsToContractions(),
                CPUGroupedConvolutionsToTaps(),
                CPUSplitPaddedConvolutions(tile_pixels=register_tile_pixels(model)),
                # i8 matmuls in the u8 x s8 form of the CPU's dot products.
                *([CPUVNNIContractions()] if "avx512vnni" in model.dot_products else []),
                FuncSplitInitializer(),
                TunedChoices(schedule.model()),
                CPUOutlineFusionGroups(),
                schedule,
            ], description="linalg on tensors and the transform script scheduling it"),
            Stage("tiled", [
                CPUApplySchedule(),
                # The bf16 dot products' rows of B as one vector load each.
                *([CPUFlattenContiguousReads()] if model.bf16_dot_products else []),
                "canonicalize",
                "cse",
                FuncSplitInitializer(),
            ], description="loop nests of vector ops on tensors"),
            Stage("bufferized", [
                CPUProtectInputs(),
                ConvertShardCollectivesToMPI(),
                "eliminate-empty-tensors",
                BUFFERIZE,
                FuncCopyRepeatedResults(),
                "buffer-results-to-out-params{hoist-static-allocs modify-public-functions}",
                "canonicalize",
                CPUForwardResultCopies(),
                CPUStridedCopiesToLoops(),
                "ownership-based-buffer-deallocation",
                "canonicalize",
                "buffer-deallocation-simplification",
                "bufferization-lower-deallocations",
                "convert-shard-to-mpi",
                ShardFinalizeMPI(),
                "cse",
                "canonicalize",
                CPUPlanMemory(),
            ], description="linalg on memrefs; results are out-parameters"),
            Stage("loops", [
                "func.func(convert-linalg-to-loops)",
                "canonicalize",
                "cse",
                CPUApproximateMath(),
                *([CPUX86DotProducts()] if "avx512vnni" in model.dot_products else []),
                CPULowerVectors(),
                "convert-vector-to-scf{full-unroll=true}",
                "scf-forall-to-parallel" if self.threads > 1 else "scf-forall-to-for",
                "lower-affine",
            ], description="scf loops over memrefs; vector ops lowered for the CPU"),
            Stage("llvm-mlir", [
                *([f"convert-scf-to-openmp{{num-threads={self.threads}}}",
                   CPUDynamicThreadSchedule()] if self.threads > 1 else []),
                CPURequestCInterface(),
                CPUWidenBoolMemrefs(),
                "func.func(arith-emulate-unsupported-floats{source-types=bf16,f16 target-type=f32})",
                "func.func(math-extend-to-supported-types{target-type=f32})",
                "arith-expand{include-bf16}",
                "expand-strided-metadata",
                "lower-affine",
                "convert-vector-to-llvm{enable-x86vector}" if model.arch == "x86_64"
                else "convert-vector-to-llvm",
                "finalize-memref-to-llvm",
                "convert-math-to-llvm",
                "convert-math-to-libm",
                CPUDisableLLVMLoopVectorizer(),
                "convert-scf-to-cf",
                "convert-to-llvm",
                "reconcile-unrealized-casts",
                CPUHideImplementations(),
                # Without the instruction, LLVM calls __truncsfbf2: defined here.
                *([] if self.model.converts_bf16 else [CPUDefineBF16Truncation()]),
                "canonicalize",
                CPUCheckLoweredToLLVM(),
            ], description="the LLVM dialect"),
            Stage("llvm", [
                TranslateToLLVMIR(self.triple),
                Opt(self.triple, self.cpu, self.features, self.opt_level, self.llvm_options()),
            ], kind="llvm", description="optimized LLVM IR"),
            Stage("asm", [LLC(self.triple, self.cpu, self.features, "asm", self.opt_level,
                              self.llvm_options())],
                  kind="asm", input="llvm", description="assembly"),
            Stage("obj", [LLC(self.triple, self.cpu, self.features, "obj", self.opt_level,
                              self.llvm_options())],
                  kind="obj", input="llvm", description="relocatable object file"),
        ], target=self)
        # Batch norms folded into the weights before them, and what depends
        # on weights alone computed now (constants) or once, when the
        # weights are bound (the initialiser).
        pipeline.insert_after("nn-canonicalize", FuncSplitInitializer(), stage="nn")
        pipeline.insert_after("nn-canonicalize", NNFoldConstants(), stage="nn")
        pipeline.insert_after("nn-canonicalize", NNFoldBatchNorm(), stage="nn")
        # f16/bf16 contractions through the f32 schedules.
        pipeline.insert_before("nn-fuse", CPUWidenContractions(
            bf16_dot_products=model.bf16_dot_products), stage="fused")
        # Attention flash-style, in tiles of this CPU's register tile.
        queries, keys = attention_tiles(self.model.schedule_model(self.threads))
        return pipeline.replace("convert-nn-to-linalg", ConvertNNToLinalg(
            attention_query_tile=queries, attention_key_tile=keys), stage="linalg")

    def check_program(self, module: ir.Module, pipeline: Pipeline | None) -> None:
        """Raises CompileError at the first op of the hw dialect, unless a
        pipeline of the user's own is given: hw programs are GPU kernels,
        which the CPU pipeline does not lower (their emulation does)."""
        if pipeline is not None and pipeline.target is not self:
            return
        found = []

        def visit(op):
            if op.name.startswith("hw."):
                found.append(op)
                return ir.WalkResult.INTERRUPT
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
        if found:
            raise CompileError.at(found[0].location,
                                  f"'{found[0].name}' is an op of the hw dialect: an hw program "
                                  "runs on a cuda target (--target=cuda:sm_80), or on the CPU "
                                  "through its emulation (--target=cuda:sm_80 --emulate); the "
                                  "cpu target compiles nn programs")

    def emit(self, module: ir.Module, stage: str, pipeline: Pipeline | None = None,
             print_after_all: bool = False, isolate: bool = False):
        self.check_program(module, pipeline)
        return super().emit(module, stage, pipeline=pipeline, print_after_all=print_after_all,
                            isolate=isolate)

    def compile(self, module: ir.Module, entry: str | None = None,
                pipeline: Pipeline | None = None, distributed: bool = False) -> CompiledFunction:
        """The JIT-compiled function `entry`. A sharded program runs whole
        in this process (its shardings erased: `nn-shard-erase` replaces
        `nn-shard-partition`) unless `distributed`, where it is one rank's
        partition calling MPI (see lamina.sharding). Compiled programs are
        cached, so a second compile of the same one loads it (lamina.cache)."""
        self.check_program(module, pipeline)
        pipeline = (pipeline or self.pipeline()).copy()
        if distributed and not self.native:
            raise ValueError(f"a distributed run is for the host's architecture, not "
                             f"{self.model.architecture_name}")
        libraries = self.runtime_libraries()
        if self.native and self.uses_amx:
            request_amx_state()
        _reuse_freed_temporaries()
        if self.threads > 1:
            _idle_workers_wait_briefly()
        if distributed:
            from lamina.sharding import mpi_library
            libraries.append(mpi_library())
            return jit_compile(module, entry=entry, pipeline=pipeline, shared_libs=libraries,
                               opt_level=self.opt_level)
        for stage in pipeline.stages:
            passes = pipeline.stage(stage).passes
            passes[:] = [NNShardErase() if isinstance(p, NNShardPartition) else p
                         for p in passes]
        if not self.native:
            from lamina.targets.cross import compile_emulated
            return compile_emulated(self.model, module, entry, pipeline)
        function = cached_compile(module, entry, self.description(), pipeline, libraries,
                                  lambda: jit_compile(module, entry=entry, pipeline=pipeline,
                                                      shared_libs=libraries,
                                                      opt_level=self.opt_level))
        return self._bindable(function, module, entry, pipeline, libraries)

    def _bindable(self, function: ArrayFunction, module: ir.Module, entry: str | None,
                  pipeline: Pipeline, libraries: list[str]) -> ArrayFunction:
        """`function`, able to bind weights (`ArrayFunction.bind`): the
        program compiled again with them bound, split into an initialiser
        and the rest."""
        with_shape_function(function, module, entry)
        function.argument_names = tuple(argument_names(find_entry(module, entry)))
        function.binder = lambda indices: jit_compile_bound(
            module, entry, indices, pipeline, shared_libs=libraries, opt_level=self.opt_level)
        return function

    def description(self) -> str:
        """What compiled code depends on: triple, CPU, features, threads,
        optimisation level (a key of Lamina's caches)."""
        return (f"{self.triple} {self.cpu} {','.join(self.features)} threads={self.threads} "
                f"O{self.opt_level}")


IDLE_WORKER_WAIT = "50us"
"""How long an OpenMP worker spins for the next parallel loop before it
sleeps (`KMP_BLOCKTIME`). The runtime's default, 200 ms, lets spinning
workers take the time slices of the thread that holds the work on a
machine that other processes share: a 512^3 matmul compiled for 2 threads
on the shared 2-core machine (load average 9) took a median of 40-56 ms
with spinning and 4-5 ms with sleeping workers (2.7 ms at best on one
thread). Sleeping at once (0) makes every parallel loop wake its workers
(a futex wake-up and a reschedule, about 0.1 ms): a fusion group runs
several loops (its packing copies, its tiles, its epilogue), so
mobilenet_v2 on two threads took 35.4 ms with workers that slept at once
and 17.6 ms with workers that waited 50 us, which bridges the gaps between
one group's loops and the next group's (beside a process that kept one
core busy: 23.7 and 32.4 ms; with the dynamic schedule and 0, 31.9 ms)."""


def _idle_workers_wait_briefly() -> None:
    """OpenMP's worker threads wait IDLE_WORKER_WAIT for the next parallel
    loop, then sleep, unless the user set KMP_BLOCKTIME. LLVM's OpenMP
    runtime reads the variable when it starts, at the first parallel loop
    of the process, so it is set before any compiled program runs."""
    os.environ.setdefault("KMP_BLOCKTIME", IDLE_WORKER_WAIT)


# glibc's mallopt parameters: blocks above the first are mmapped, and free
# memory above the second at the top of the heap is given back.
_M_MMAP_THRESHOLD, _M_TRIM_THRESHOLD = -3, -1


def _reuse_freed_temporaries() -> None:
    """Keeps the memory of freed temporaries in the process. Compiled
    functions allocate their temporaries (megabytes: attention scores, a
    conv's NHWC copies) at each call and free them before returning; glibc
    hands blocks that large back to the kernel at once, and every call
    then pays page faults to zero them again (measured: 3x the time of the
    bench's attention). Raised once, process-wide, unless the user tunes
    malloc through the environment; other C libraries are left alone."""
    global _REUSE_SET
    if _REUSE_SET:
        return
    _REUSE_SET = True
    if any(key in os.environ for key in ("GLIBC_TUNABLES", "MALLOC_MMAP_THRESHOLD_",
                                          "MALLOC_TRIM_THRESHOLD_")):
        return
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            return
        import ctypes
        mallopt = ctypes.CDLL(None).mallopt
    except (AttributeError, OSError, ValueError):
        return
    mallopt(_M_MMAP_THRESHOLD, 32 << 20)      # glibc's maximum on 64-bit
    mallopt(_M_TRIM_THRESHOLD, 256 << 20)


_REUSE_SET = False


# Architectures LLVM has a backend for that Lamina's cpu target does not
# compile for (yet).
_OTHER_ARCHITECTURES = {"arm": "ARM", "riscv64": "RISC-V", "riscv32": "RISC-V",
                        "ppc64le": "PowerPC"}
# Other names of presets.
_ALIASES = {"arm64": "aarch64"}


def _near(name: str, known) -> str:
    """`; did you mean 'x'?` for the known names nearest to `name`, or nothing."""
    near = difflib.get_close_matches(name, known, n=3)
    return f"; did you mean {' or '.join(repr(n) for n in near)}?" if near else ""


def cpu_model_named(cpu: str) -> CPUTargetModel:
    """The model of a preset (CPU_PRESETS) or of a CPU the pinned LLVM
    knows (x86-64 first, then AArch64: `llc -mcpu=help`). Raises
    ValueError naming the near ones and listing all."""
    cpu = _ALIASES.get(cpu, cpu)
    if cpu in CPU_PRESETS:
        return CPU_PRESETS[cpu]
    for arch in ARCHITECTURES:
        if cpu in machine_names(arch).cpus:
            return model_for(arch, cpu, ())
    other = _OTHER_ARCHITECTURES.get(cpu.lower())
    if other is not None:
        raise ValueError(f"'{cpu}' is {'an' if other == 'ARM' else 'a'} {other} architecture: "
                         f"{other} is not a target yet (the cpu target compiles for x86-64 "
                         "and AArch64 CPUs)")
    known = list(dict.fromkeys([*CPU_PRESETS, *machine_names("x86_64").cpus,
                                *machine_names("aarch64").cpus]))
    raise ValueError(f"unknown CPU '{cpu}' in target 'cpu:{cpu}'{_near(cpu, known)} (presets: "
                     f"{', '.join(CPU_PRESETS)}; x86-64 CPUs the pinned LLVM knows: "
                     f"{', '.join(machine_names('x86_64').cpus)}; AArch64 CPUs the pinned LLVM "
                     f"knows: {', '.join(machine_names('aarch64').cpus)})")


def check_cpu_name(cpu: str) -> None:
    """Raises ValueError unless `cpu` names a preset or a CPU the pinned
    LLVM knows (see `cpu_model_named`)."""
    cpu_model_named(cpu)


def check_feature_names(features, arch: str = "x86_64") -> None:
    """Raises ValueError unless every feature is `+name` or `-name` with a
    name the pinned LLVM's backend for `arch` knows."""
    known = machine_names(arch).features
    for feature in features:
        name = feature[1:]
        if feature[:1] in ("+", "-") and name in known:
            continue
        if feature[:1] not in ("+", "-"):
            raise ValueError(f"feature '{feature}' must start with '+' (enable) or '-' (disable)")
        raise ValueError(f"unknown CPU feature '{name}'{_near(name, known)} "
                         f"({ARCHITECTURE_NAMES[arch]} features the pinned LLVM knows: "
                         f"{', '.join(known)})")


def _split_glued_features(item: str) -> tuple[str, list[str]]:
    """`aarch64+sve+bf16` -> (`aarch64`, [`+sve`, `+bf16`]); a name that
    is a preset or an LLVM CPU as it is stays whole."""
    if "+" not in item or item in _ALIASES or item in CPU_PRESETS:
        return item, []
    name, *features = item.split("+")
    return name, [f"+{f}" for f in features]


@register_target("cpu")
def _cpu_target(arch: str | None) -> Target:
    """`cpu`, `cpu:CPU` (a preset or an LLVM CPU name, features glued on
    with `+`: `cpu:aarch64+sve`), and options after a comma: `threads=N`,
    features `+name` / `-name` (`cpu:znver4,+avx512f,threads=2`). An
    unknown CPU, feature or option is a ValueError."""
    cpu, threads, opt_level, changes = None, None, DEFAULT_OPT_LEVEL, []
    items = arch.split(",") if arch else []
    for index, item in enumerate(items):
        item = item.strip()
        key, eq, value = item.partition("=")
        if eq and key.strip() == "threads":
            try:
                threads = int(value)
            except ValueError:
                raise ValueError(f"threads in target 'cpu:{arch}' must be an integer, "
                                 f"got '{value}'") from None
        elif eq and key.strip() == "opt":
            if value.strip() not in ("0", "1", "2", "3"):
                raise ValueError(f"opt in target 'cpu:{arch}' must be 0, 1, 2 or 3 (LLVM's "
                                 f"optimisation level), got '{value}'")
            opt_level = int(value)
        elif eq:
            raise ValueError(f"unknown option '{key}' in target 'cpu:{arch}' (options: threads, "
                             "opt, +feature, -feature)")
        elif item[:1] in ("+", "-"):
            changes.append(item)
        elif not item:
            raise ValueError(f"empty item in target 'cpu:{arch}'")
        elif index == 0:
            cpu, glued = _split_glued_features(item)
            changes.extend(glued)
        else:
            raise ValueError(f"unknown option '{item}' in target 'cpu:{arch}' (the CPU comes "
                             "first; options: threads=N, opt=N, +feature, -feature)")
    if not changes:
        return CPUTarget(cpu=cpu, threads=threads, opt_level=opt_level)
    return CPUTarget(cpu=cpu, features=tuple(changes), threads=threads, opt_level=opt_level)
