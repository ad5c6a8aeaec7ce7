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
  of public functions are read-only, so inputs are never written;
* `vector`: named linalg ops become generics; one loop of each generic
  (the innermost contiguous one, in steps of 16, 8 or 4) is tiled and
  vectorized where upstream's vectorizer can;
* `loops`: the remaining linalg ops and the vector ops' tile loops become
  scf loops over memrefs;
* `llvm-mlir`: the LLVM dialect. Public functions get the C interface, i1
  buffers are stored as bytes, f16/bf16 arithmetic and math are done in
  f32 (rounded after each op), math functions become LLVM intrinsics or
  libm calls;
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

import numpy as np
from mlir import ir

from lamina.diagnostics import CompileError, Diagnostic
from lamina.pass_registry import Pass, PassFailure
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
# CPU-specific passes of the pipeline.


@dataclass
class ProtectInputs(Pass):
    """Marks the tensor arguments of public functions read-only for
    bufferization, so that compiled code never writes the caller's inputs."""

    argument: ClassVar[str] = "cpu-protect-inputs"

    def run(self, op):
        for func in _public_functions(op):
            arg_attrs = func.attributes["arg_attrs"] if "arg_attrs" in func.attributes else None
            inputs = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value).inputs
            new_attrs = []
            for index, argument_type in enumerate(inputs):
                entries = {}
                if arg_attrs is not None:
                    old = ir.DictAttr(ir.ArrayAttr(arg_attrs)[index])
                    entries = {old[i].name: old[i].attr for i in range(len(old))}
                if isinstance(argument_type, ir.RankedTensorType):
                    entries["bufferization.writable"] = ir.BoolAttr.get(False)
                new_attrs.append(ir.DictAttr.get(entries))
            if new_attrs:
                func.attributes["arg_attrs"] = ir.ArrayAttr.get(new_attrs)


@dataclass
class RequestCInterface(Pass):
    """Gives public functions with a body the C interface
    (`_mlir_ciface_NAME`, memref descriptors passed by pointer)."""

    argument: ClassVar[str] = "cpu-request-c-interface"

    def run(self, op):
        for func in _public_functions(op):
            func.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()


@dataclass
class WidenBoolMemrefs(Pass):
    """Stores i1 buffers as bytes: every `memref<...xi1>` becomes
    `memref<...xi8>`; loads truncate and stores extend.

    LLVM 22's memref-to-LLVM lowering aborts on loads of i1 elements, and
    bytes are what NumPy's bool arrays are. Expects memrefs accessed by
    `memref.load`/`memref.store` only (run after loops are formed); any
    other op reading or writing i1 elements of a buffer is reported."""

    argument: ClassVar[str] = "cpu-widen-bool-memrefs"

    def run(self, op):
        with op.location:
            self._widen(op)

    def _widen(self, op):
        i1 = ir.IntegerType.get_signless(1)
        i8 = ir.IntegerType.get_signless(8)

        def widened(t: ir.Type) -> ir.Type | None:
            if isinstance(t, ir.MemRefType) and t.element_type == i1:
                return ir.MemRefType.get(t.shape, i8, t.layout, t.memory_space)
            return None

        def widened_or_same(t: ir.Type) -> ir.Type:
            return widened(t) or t

        worklist: list[ir.Operation] = []

        def collect(operation):
            worklist.append(operation.operation)
            return ir.WalkResult.ADVANCE

        op.walk(collect, ir.WalkOrder.PRE_ORDER)
        # Decided on the original types, before any value is widened.
        touches = [any(widened(v.type) for v in operation.operands) for operation in worklist]
        accesses = []
        for operation, touches_bool_buffer in zip(worklist, touches):
            name = operation.name
            for region in operation.regions:
                for block in region.blocks:
                    for argument in block.arguments:
                        if widened(argument.type):
                            argument.set_type(widened(argument.type))
            if name == "func.func":
                function_type = ir.FunctionType(ir.TypeAttr(operation.attributes["function_type"]).value)
                if any(widened(t) for t in list(function_type.inputs) + list(function_type.results)):
                    operation.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
                        [widened_or_same(t) for t in function_type.inputs],
                        [widened_or_same(t) for t in function_type.results]))
            elif name == "memref.global":
                global_type = ir.TypeAttr(operation.attributes["type"]).value
                if widened(global_type):
                    self._widen_global(operation, widened(global_type))
            elif name in ("memref.load", "memref.store"):
                if touches_bool_buffer:
                    accesses.append(operation)
            elif touches_bool_buffer and any(
                    _element_type(v.type) == i1 and not isinstance(v.type, ir.MemRefType)
                    for v in list(operation.operands) + list(operation.results)):
                raise PassFailure(f"'{name}' reads or writes i1 elements of a buffer; only "
                                  "memref.load and memref.store can (vectorize i1 ops as i8)",
                                  operation.location)
            for result in operation.results:
                if widened(result.type):
                    result.set_type(widened(result.type))
        for access in accesses:
            with ir.InsertionPoint(access), access.location:
                if access.name == "memref.load":
                    result = access.results[0]
                    result.set_type(i8)
                    with ir.InsertionPoint.after(access):
                        truncated = ir.Operation.create("arith.trunci", results=[i1],
                                                        operands=[result]).results[0]
                    result.replace_all_uses_except(truncated, truncated.owner.operation)
                else:
                    extended = ir.Operation.create("arith.extui", results=[i8],
                                                   operands=[access.operands[0]]).results[0]
                    access.operands[0] = extended

    @staticmethod
    def _widen_global(operation: ir.Operation, memref_type: ir.MemRefType) -> None:
        operation.attributes["type"] = ir.TypeAttr.get(memref_type)
        initial = operation.attributes["initial_value"] if "initial_value" in \
            operation.attributes else None
        if isinstance(initial, ir.DenseElementsAttr):
            tensor_type = ir.RankedTensorType.get(memref_type.shape, memref_type.element_type)
            dense = ir.DenseIntElementsAttr(initial)
            values = np.array([1 if dense[i] else 0 for i in range(len(dense))], np.int8)
            if dense.is_splat:
                values = np.full(memref_type.shape, 1 if dense.get_splat_value().value else 0,
                                 np.int8)
            operation.attributes["initial_value"] = ir.DenseElementsAttr.get(
                values.reshape(memref_type.shape), type=tensor_type)


_VECTORIZE_SCRIPT = """
module attributes {{transform.with_named_sequence}} {{
  transform.named_sequence @__transform_main(%root: !transform.any_op {{transform.readonly}}) {{
    %op = transform.structured.match attributes {{{tag}}} in %root
        : (!transform.any_op) -> !transform.any_op
    %tiled, %loops:{count} = transform.structured.tile_using_for %op tile_sizes [{sizes}]
        : (!transform.any_op) -> (!transform.any_op{loop_types})
    transform.structured.vectorize %tiled : !transform.any_op
    transform.yield
  }}
}}
"""


@dataclass
class Vectorize(Pass):
    """Tiles one loop of each `linalg.generic` on memrefs by a vector width
    and vectorizes the tile (upstream's transform dialect: tile_using_for,
    vectorize), one op at a time.

    The loop is the output's innermost dim or the op's innermost loop,
    whichever every operand reads contiguously (or broadcasts); its extent
    must be a multiple of one of `vector_sizes`. Ops this does not fit
    (convolution windows, transposes, i1 buffers, odd extents, anything the
    vectorizer refuses) are left whole for the `loops` stage. Expects
    generic ops on statically shaped memrefs (named ops generalized)."""

    argument: ClassVar[str] = "cpu-vectorize"
    vector_sizes: tuple[int, ...] = (16, 8, 4)

    TAG: ClassVar[str] = "lamina.vectorize"

    def run(self, op):
        from mlir.dialects.transform import interpreter
        generics = []

        def collect(child):
            if child.operation.name == "linalg.generic":
                generics.append(child.operation)
            return ir.WalkResult.ADVANCE

        op.walk(collect, ir.WalkOrder.PRE_ORDER)
        for generic in generics:
            sizes = self.tile_sizes(generic)
            if sizes is None:
                continue
            count = sum(1 for size in sizes if size)
            script = _VECTORIZE_SCRIPT.format(tag=self.TAG, count=count,
                                              sizes=", ".join(map(str, sizes)),
                                              loop_types=", !transform.any_op" * count)
            generic.attributes[self.TAG] = ir.UnitAttr.get()
            with generic.location:
                transform = ir.Module.parse(script)
                try:
                    interpreter.apply_named_sequence(op, transform.body.operations[0], transform)
                except ir.MLIRError:
                    pass  # the op stays (tiled) for the loops stage
            self._untag(op)

    def _untag(self, op):
        def visit(child):
            if self.TAG in child.operation.attributes:
                del child.operation.attributes[self.TAG]
            return ir.WalkResult.ADVANCE

        op.walk(visit, ir.WalkOrder.PRE_ORDER)

    def tile_sizes(self, generic: ir.Operation) -> list[int] | None:
        """Tile sizes (0 = not tiled) vectorizing one loop, or None."""
        maps = [ir.AffineMapAttr(a).value for a in generic.attributes["indexing_maps"]]
        for operand in generic.operands:
            t = operand.type
            element = ir.ShapedType(t).element_type if isinstance(t, ir.ShapedType) else t
            if str(element) == "i1" or (isinstance(t, ir.ShapedType) and
                                         not (isinstance(t, ir.MemRefType) and t.has_static_shape)):
                return None
        if not maps or not all(m.is_projected_permutation for m in maps):
            return None
        extents: list[int | None] = [None] * maps[0].n_dims
        for operand, indexing in zip(generic.operands, maps):
            if isinstance(operand.type, ir.MemRefType):
                for position, expr in enumerate(indexing.results):
                    dim = ir.AffineDimExpr(expr).position
                    extents[dim] = operand.type.shape[position]
        if not extents or None in extents:
            return None
        candidates = []
        if len(maps[-1].results):
            candidates.append(ir.AffineDimExpr(maps[-1].results[-1]).position)
        candidates.append(len(extents) - 1)
        for dim in candidates:
            contiguous = all(dim not in dims or dims[-1] == dim for dims in
                             ([ir.AffineDimExpr(e).position for e in m.results] for m in maps))
            if not contiguous:
                continue
            for width in self.vector_sizes:
                if extents[dim] % width == 0:
                    return [width if d == dim else (0 if extent == 1 else 1)
                            for d, extent in enumerate(extents)]
        return None


@dataclass
class HideImplementations(Pass):
    """Gives internal linkage to every defined LLVM function but the C
    interfaces (`_mlir_ciface_*`), so that an object file exports only
    those: a kernel named `main` must not clash with a C program's."""

    argument: ClassVar[str] = "cpu-hide-implementations"

    def run(self, op):
        internal = ir.Attribute.parse("#llvm.linkage<internal>")
        for child in op.regions[0].blocks[0].operations:
            child = child.operation
            if child.name == "llvm.func" and child.regions[0].blocks and not \
                    ir.StringAttr(child.attributes["sym_name"]).value.startswith("_mlir_ciface_"):
                child.attributes["linkage"] = internal


def _element_type(t: ir.Type) -> ir.Type | None:
    if isinstance(t, ir.ShapedType):
        return ir.ShapedType(t).element_type
    return t


def _public_functions(module_op: ir.Operation) -> list[ir.Operation]:
    functions = []
    for region in module_op.regions:
        for block in region.blocks:
            for child in block.operations:
                child = child.operation
                if child.name != "func.func" or not child.regions[0].blocks:
                    continue
                visibility = child.attributes["sym_visibility"] if "sym_visibility" in \
                    child.attributes else None
                if visibility is None or ir.StringAttr(visibility).value == "public":
                    functions.append(child)
    return functions


# ---------------------------------------------------------------------------
# Artifact stages: LLVM IR, assembly, object files.


def unlowered_op(module) -> ir.Operation | None:
    """The first op of a module that is not in the LLVM dialect, preferring
    a real op to the conversion casts left around it; None if there is none."""
    operation = module.operation if isinstance(module, ir.Module) else module
    found: list[ir.Operation] = []

    def visit(op):
        op = op.operation
        if op.name != "builtin.module" and not op.name.startswith("llvm."):
            found.append(op)
            if op.name != "builtin.unrealized_conversion_cast":
                return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    real = [op for op in found if op.name != "builtin.unrealized_conversion_cast"]
    return (real or found or [None])[0]


def _not_lowered_message(op: ir.Operation) -> str:
    return (f"'{op.name}' was not lowered to the LLVM dialect (no pass of the pipeline "
            "converts it)")


def check_llvm_dialect(module) -> None:
    """Raises CompileError at the first op that is not in the LLVM dialect
    (translation and the JIT need a module fully lowered to it)."""
    op = unlowered_op(module)
    if op is not None:
        from lamina.diagnostics import file_location
        found = file_location(op.location)
        filename, line, col = found if found else (None, 0, 0)
        raise CompileError([Diagnostic(filename, line, col, "error", _not_lowered_message(op))])


@dataclass
class CheckLoweredToLLVM(Pass):
    """Fails, at the op, when an op is left outside the LLVM dialect."""

    argument: ClassVar[str] = "cpu-check-lowered-to-llvm"

    def run(self, op):
        left = unlowered_op(op)
        if left is not None:
            raise PassFailure(_not_lowered_message(left), left.location)


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
                ProtectInputs(),
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
                Vectorize(),
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
                RequestCInterface(),
                WidenBoolMemrefs(),
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
                HideImplementations(),
                "canonicalize",
                CheckLoweredToLLVM(),
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
