"""Running hw programs on an NVIDIA GPU through the CUDA driver API.

`CUDATarget.compile` (`lamina.compile(module, target="cuda:sm_90a")`,
`lamina-run FILE --target=cuda:ARCH`) compiles a program to its kernels
(a cubin, or PTX that the driver compiles for a newer GPU), its kernel
manifest and its host program, and returns a `CUDAFunction`, a
device-resident engine. At load, the host program (the entry function at
the end of the `hw` stage) becomes a `LaunchGraph`: its launches and
copies as data, each buffer a slot in the inputs, the outputs or one
arena, the memory plan `hw-plan-memory` fixed at compile time; the arena
and staging buffers for NumPy arguments are allocated then, once. A call

* on NumPy arrays copies the inputs into the staging buffers, on DLPack
  tensors on the GPU (PyTorch, CuPy, JAX) takes their memory in place
  (`lamina.dlpack`);
* launches the graph's kernels on one stream with no host round trip
  between them: `cuLaunchKernel` with the grid and block of each launch,
  the dynamic shared memory of the manifest and the parameters made once
  per address set. Each memref argument of a kernel is passed as
  upstream's lowering declares it, the fields of its memref descriptor
  (allocated and aligned pointers, offset, sizes, strides); then come the
  TMA descriptors the manifest lists, each a `CUtensorMap` made by
  `cuTensorMapEncodeTiled` and copied to device memory (upstream's
  `mgpuTensorMapEncodeTiledMemref` passes them the same way). With CUDA
  graphs (the default; `graphs=False` or LAMINA_CUDA_GRAPHS=0 turn them
  off) the first call on an address set captures the launches
  (`cuStreamBeginCapture` ... `cuGraphInstantiate`) and the next ones
  replay them (`cuGraphLaunch`); a capture the driver refuses falls back
  to launching one by one;
* copies the NumPy results (and arguments written in place) back, or
  returns DLPack tensors over device memory from a pool, the call left
  running on the stream, which synchronises with the legacy default
  stream that PyTorch's and CuPy's default streams are.

The parts that need no GPU — manifest parsing, the host program, the
kernel parameters, the tensor maps' parameters, the choice between cubin
and PTX — are plain functions, tested without one. Where there is no
driver or no GPU, `driver()` raises `CUDAError` ("no CUDA driver/GPU
found (...)"), which tools print as their own error.

The driver is reached through PyPI's `cuda-bindings` (Lamina's optional
extra `cuda`), module `cuda.bindings.driver`; every call's status is
checked and a failure raises `CUDAError` naming the call and the error.
"""

from __future__ import annotations

import base64
import ctypes
import functools
import json
import math
import os
import re
import statistics
import time
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
from mlir import ir

from lamina.diagnostics import CompileError, Diagnostic
from lamina.dialects import hw
from lamina.passes.cpu_plan_memory import MEMORY_PLAN
from lamina.dlpack import CPU, CUDA, CUDA_HOST, DLPackBuffer, DLPackCalls, TensorView
from lamina.runtime import ArrayFunction
from lamina.types import MemRefType, TensorType, VerifyError, numpy_dtype


class CUDAError(CompileError):
    """A CUDA driver call failed, or there is no driver or GPU. A
    CompileError without a location, so tools print it as their own
    (`lamina-run: error: ...`)."""

    def __init__(self, message: str):
        super().__init__([Diagnostic(None, 0, 0, "error", message)], message)


# ---------------------------------------------------------------------------
# The kernel manifest.


@dataclass(frozen=True)
class TensorMapSpec:
    """A TMA descriptor a kernel takes after its arguments: boxes of
    `box` (rows, cols) elements of the memref argument `argument`,
    swizzled over `swizzle_bytes` (0: not swizzled)."""

    argument: int
    box: tuple[int, ...]
    dtype: str
    swizzle_bytes: int


@dataclass(frozen=True)
class KernelSpec:
    """What the manifest says of a kernel's launches: the block size, the
    dynamic shared memory in bytes, the TMA descriptors, and (with ptxas)
    its registers per thread."""

    name: str
    block: tuple[int, int, int]
    dynamic_shared_memory: int
    tensor_maps: tuple[TensorMapSpec, ...] = ()
    registers: int | None = None


def parse_manifest(text: str) -> dict[str, KernelSpec]:
    """The kernels of a manifest (`lamina-compile --emit=manifest`), by
    name. Raises CUDAError for a manifest that is not Lamina's."""
    try:
        manifest = json.loads(text)
        kernels: dict[str, KernelSpec] = {}
        resources = manifest.get("kernels") or {}
        for launch in manifest["launches"]:
            name = launch["kernel"]
            maps = tuple(TensorMapSpec(int(d["argument"]), tuple(int(b) for b in d["box"]),
                                       str(d["dtype"]), int(d["swizzle_bytes"]))
                         for d in launch.get("tma_descriptors", []))
            registers = (resources.get(name) or {}).get("registers")
            spec = KernelSpec(name, tuple(int(b) for b in launch["block"]),
                              int(launch["dynamic_shared_memory"]), maps, registers)
            if kernels.setdefault(name, spec) != spec:
                raise ValueError(f"launches of kernel {name} differ in block, shared memory "
                                 "or TMA descriptors")
        return kernels
    except (ValueError, KeyError, TypeError) as error:
        raise CUDAError(f"malformed kernel manifest: {error}") from None


def entry_parameter_counts(ptx: str) -> dict[str, int]:
    """The number of parameters of each `.entry` of a PTX module."""
    return {found.group(1): found.group(2).count(".param")
            for found in re.finditer(r"\.entry\s+([\w$.]+)\s*\(([^)]*)\)", ptx)}


# ---------------------------------------------------------------------------
# The host program.


@dataclass(frozen=True)
class Alloc:
    """A new buffer in device memory."""

    result: int
    type: MemRefType


@dataclass(frozen=True)
class View:
    """A buffer's bytes from `offset` on seen with another type
    (collapse/expand_shape, cast; memref.view, a buffer of the memory
    plan in its arena)."""

    result: int
    source: int
    type: MemRefType
    offset: int = 0


@dataclass(frozen=True)
class Constant:
    """A scalar for kernel arguments."""

    result: int
    type: str
    value: int | float


@dataclass(frozen=True)
class Copy:
    """A buffer copied into another of the same size."""

    source: int
    target: int


@dataclass(frozen=True)
class Launch:
    """A kernel launch; `arguments` are values of the host program."""

    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    arguments: tuple[int, ...]


# Host ops that only release or annotate memory.
_IGNORED = ("memref.dealloc", "func.return")
_VIEWS = ("memref.collapse_shape", "memref.expand_shape", "memref.cast")
# Kernel scalar argument types and their C types.
_SCALARS = {"index": ctypes.c_int64, "i64": ctypes.c_int64, "i32": ctypes.c_int32,
            "i16": ctypes.c_int16, "i8": ctypes.c_int8, "f32": ctypes.c_float,
            "f64": ctypes.c_double}


@dataclass
class HostProgram:
    """The entry function at the end of the `hw` stage, as steps over
    numbered values: the function's parameters (inputs, then results as
    out-parameters) are values 0..n-1."""

    name: str
    parameters: list[MemRefType]
    steps: list = field(default_factory=list)
    values: int = 0
    # The function's memory plan (`memory_plan_of`), None if it has none.
    memory_plan: dict[str, int] | None = None

    @classmethod
    def from_module(cls, module: ir.Module, name: str) -> "HostProgram":
        """The host program of function `name`; raises CompileError at an
        op that is not a launch, an allocation, a view, a scalar constant
        or a copy."""
        function = None
        for op in module.body.operations:
            op = op.operation
            if op.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == name:
                function = op
        if function is None:
            raise CompileError.at(module.operation.location, f"no function @{name} after the "
                                  "hw stage")
        block = function.regions[0].blocks[0]
        numbered: list[ir.Value] = []

        def number(value: ir.Value) -> int:
            for index, known in enumerate(numbered):
                if known == value:
                    return index
            numbered.append(value)
            return len(numbered) - 1

        parameters = []
        for index, argument in enumerate(block.arguments):
            parameters.append(_buffer_type(argument.type, function.location,
                                           f"argument #{index} of @{name}"))
            number(argument)
        program = cls(name, parameters, memory_plan=memory_plan_of(function))
        for op in block.operations:
            op = op.operation
            program.steps.extend(_host_step(op, number))
        program.values = len(numbered)
        return program

    @property
    def launches(self) -> list[Launch]:
        return [s for s in self.steps if isinstance(s, Launch)]


def memory_plan_of(function: ir.Operation) -> dict[str, int] | None:
    """The memory plan `hw-plan-memory` recorded on a host function (func
    or llvm dialect): the arena's bytes (the peak device memory a call
    needs beside its inputs and outputs), its buffers, and the bytes they
    would take apart; None where there is none."""
    if MEMORY_PLAN not in function.attributes:
        return None
    plan = ir.DictAttr(function.attributes[MEMORY_PLAN])
    return {key: ir.IntegerAttr(plan[key]).value
            for key in ("arena_bytes", "buffers", "buffer_bytes")}


def _buffer_type(t: ir.Type, location: ir.Location, what: str) -> MemRefType:
    try:
        memref = MemRefType.from_mlir(t)
    except VerifyError as error:
        raise CompileError.at(location, f"{what}: {error}; the CUDA runtime moves static, "
                              "contiguous memrefs") from None
    if memref.space != "global":
        raise CompileError.at(location, f"{what}: {t} is not in global memory")
    return memref


def _host_step(op: ir.Operation, number) -> list:
    name = op.name
    if name in _IGNORED:
        return []
    if name in ("memref.alloc", "memref.alloca"):
        return [Alloc(number(op.results[0]), _buffer_type(op.results[0].type, op.location,
                                                          "an allocation"))]
    if name in _VIEWS:
        return [View(number(op.results[0]), number(op.operands[0]),
                     _buffer_type(op.results[0].type, op.location, "a view"))]
    if name == "memref.view" and len(op.operands) == 2:
        shift = op.operands[1].owner
        if getattr(shift, "name", None) == "arith.constant":
            return [View(number(op.results[0]), number(op.operands[0]),
                         _buffer_type(op.results[0].type, op.location, "a view"),
                         ir.IntegerAttr(shift.attributes["value"]).value)]
    if name == "memref.copy":
        return [Copy(number(op.operands[0]), number(op.operands[1]))]
    if name == "arith.constant" and str(op.results[0].type) in _SCALARS:
        attribute = op.attributes["value"]
        value = (ir.IntegerAttr(attribute).value if isinstance(attribute, ir.IntegerAttr)
                 else ir.FloatAttr(attribute).value)
        return [Constant(number(op.results[0]), str(op.results[0].type), value)]
    if name == "hw.launch":
        view = hw.LaunchOp.from_operation(op)
        return [Launch(view.kernel, view.grid3, view.block3,
                       tuple(number(v) for v in op.operands))]
    raise CompileError.at(op.location, f"'{name}' cannot run in the host code of the CUDA "
                          "runtime, which launches kernels, allocates, reshapes and copies "
                          "device memory and makes scalar constants")


# ---------------------------------------------------------------------------
# The launch graph.

# The regions a buffer of a launch graph lives in: the program's inputs
# and outputs (the caller's memory) and its arena (the runtime's).
INPUT, OUTPUT, ARENA = "input", "output", "arena"
# The alignment of a buffer the runtime places in the arena (cuMemAlloc's).
ARENA_ALIGNMENT = 256


@dataclass(frozen=True)
class Slot:
    """A buffer of a launch graph: `offset` bytes into input, output
    (number `index`) or the arena, seen as `type`."""

    region: str
    index: int
    offset: int
    type: MemRefType

    @property
    def nbytes(self) -> int:
        return _bytes(self.type)


@dataclass(frozen=True)
class KernelLaunch:
    """A kernel launch of a launch graph: grid, block, dynamic shared
    memory, the arguments (slots and scalar constants) and the TMA
    descriptors the kernel takes after them."""

    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_bytes: int
    arguments: tuple
    tensor_maps: tuple[TensorMapSpec, ...] = ()


@dataclass(frozen=True)
class BufferCopy:
    """A slot's bytes copied into another slot of the same size."""

    source: Slot
    target: Slot


@dataclass(frozen=True)
class LaunchGraph:
    """A GPU program's host program as data, built once at load: the
    launches and copies it runs in order on one stream, every buffer a
    slot in its inputs, outputs or one arena of `arena_bytes` (the memory
    plan of `hw-plan-memory`, fixed at compile time). A call binds the
    regions to memory (device memory on the GPU, host memory under the
    emulation) and runs the commands; nothing crosses to the host between
    them."""

    name: str
    inputs: tuple[MemRefType, ...]
    outputs: tuple[MemRefType, ...]
    arena_bytes: int
    commands: tuple

    @classmethod
    def from_host(cls, host: HostProgram, kernels: dict[str, KernelSpec] | None,
                  inputs: int) -> "LaunchGraph":
        """The graph of `host`, whose first `inputs` parameters are the
        program's inputs and the others its outputs, its kernels' shared
        memory and TMA descriptors those of the manifest's `kernels` (None:
        none, for the CPU); its allocations are placed one after another in
        the arena (after `hw-plan-memory` the one allocation is the plan's
        arena itself). Raises CUDAError for a launch of a kernel the
        manifest lacks."""
        slots: list = [None] * host.values
        for index, memref in enumerate(host.parameters):
            slots[index] = (Slot(INPUT, index, 0, memref) if index < inputs
                            else Slot(OUTPUT, index - inputs, 0, memref))
        arena = 0
        commands = []
        for step in host.steps:
            if isinstance(step, Alloc):
                slots[step.result] = Slot(ARENA, 0, arena, step.type)
                arena += -(-_bytes(step.type) // ARENA_ALIGNMENT) * ARENA_ALIGNMENT
            elif isinstance(step, View):
                source = slots[step.source]
                slots[step.result] = Slot(source.region, source.index,
                                          source.offset + step.offset, step.type)
            elif isinstance(step, Constant):
                slots[step.result] = step
            elif isinstance(step, Copy):
                commands.append(BufferCopy(slots[step.source], slots[step.target]))
            else:
                if kernels is not None and step.kernel not in kernels:
                    raise CUDAError(f"the kernel manifest has no kernel {step.kernel}")
                spec = kernels[step.kernel] if kernels is not None else KernelSpec(
                    step.kernel, step.block, 0)
                commands.append(KernelLaunch(step.kernel, step.grid, step.block,
                                             spec.dynamic_shared_memory,
                                             tuple(slots[a] for a in step.arguments),
                                             spec.tensor_maps))
        return cls(host.name, tuple(host.parameters[:inputs]),
                   tuple(host.parameters[inputs:]), arena, tuple(commands))

    @property
    def launches(self) -> list[KernelLaunch]:
        return [c for c in self.commands if isinstance(c, KernelLaunch)]

    def describe(self) -> str:
        """The graph, a command a line (what `lamina-run --report` shows)."""
        def slot(s) -> str:
            if isinstance(s, Constant):
                return f"{s.value} : {s.type}"
            where = "arena" if s.region == ARENA else f"{s.region}{s.index}"
            return f"{where}+{s.offset} : {s.type}"
        count = len(self.launches)
        lines = [f"@{self.name}: {count} launch{'' if count == 1 else 'es'}, arena "
                 f"{self.arena_bytes} bytes"]
        for command in self.commands:
            if isinstance(command, BufferCopy):
                lines.append(f"  copy {slot(command.source)} -> {slot(command.target)}")
            else:
                lines.append(f"  {command.kernel} grid {command.grid} block {command.block} "
                             f"shared {command.shared_bytes}: "
                             + ", ".join(slot(a) for a in command.arguments))
        return "\n".join(lines)


# ---------------------------------------------------------------------------
# Kernel parameters.


def contiguous_strides(shape: Sequence[int]) -> list[int]:
    strides, stride = [], 1
    for size in reversed(shape):
        strides.append(stride)
        stride *= size
    return strides[::-1]


def memref_parameters(address: int, memref: MemRefType) -> list:
    """A memref kernel argument as upstream's GPU lowering passes it: the
    fields of its descriptor, each a parameter (allocated and aligned
    pointers, offset, sizes, strides in elements)."""
    return ([ctypes.c_uint64(address), ctypes.c_uint64(address), ctypes.c_int64(0)]
            + [ctypes.c_int64(s) for s in memref.shape]
            + [ctypes.c_int64(s) for s in contiguous_strides(memref.shape)])


def scalar_parameter(dtype: str, value) -> ctypes._SimpleCData:
    return _SCALARS[dtype](value)


def launch_parameters(launch: Launch, types: Sequence, addresses: Sequence[int | None]) -> list:
    """The parameters of a launch's arguments, before its TMA descriptors:
    memrefs (`types[v]` a MemRefType at device address `addresses[v]`) as
    their descriptors' fields, scalars (`types[v]` a Constant) as values."""
    values = []
    for argument in launch.arguments:
        kind = types[argument]
        if isinstance(kind, Constant):
            values.append(scalar_parameter(kind.type, kind.value))
        else:
            values.extend(memref_parameters(addresses[argument], kind))
    return values


class PackedParameters:
    """`cuLaunchKernel`'s kernelParams: an array of pointers to the
    parameter values, kept alive with them."""

    def __init__(self, values: Sequence[ctypes._SimpleCData]):
        self.values = list(values)
        self.pointers = (ctypes.c_void_p * max(len(self.values), 1))(
            *[ctypes.addressof(v) for v in self.values])

    @property
    def address(self) -> int:
        return ctypes.addressof(self.pointers)

    def __len__(self) -> int:
        return len(self.values)


# ---------------------------------------------------------------------------
# TMA descriptors.

_TENSOR_MAP_TYPES = {"f16": "FLOAT16", "bf16": "BFLOAT16", "f32": "FLOAT32", "f64": "FLOAT64",
                     "i8": "UINT8", "i16": "UINT16", "i32": "INT32", "i64": "INT64"}
_SWIZZLES = {0: "NONE", 32: "32B", 64: "64B", 128: "128B"}


@dataclass(frozen=True)
class TensorMapParameters:
    """The arguments of `cuTensorMapEncodeTiled` for a row-major buffer,
    innermost dimension first as the driver wants them: data type and
    swizzle as the names of the driver's enum members, sizes and box in
    elements, strides (of all dims but the innermost) in bytes."""

    data_type: str
    rank: int
    global_dim: tuple[int, ...]
    global_strides: tuple[int, ...]
    box_dim: tuple[int, ...]
    element_strides: tuple[int, ...]
    swizzle: str


def tensor_map_parameters(memref: MemRefType, spec: TensorMapSpec) -> TensorMapParameters:
    """The tensor map of TMA boxes `spec` over a buffer of type `memref`;
    raises CUDAError where the driver would refuse it."""
    if spec.dtype != memref.dtype or memref.dtype not in _TENSOR_MAP_TYPES:
        raise CUDAError(f"a TMA descriptor of {spec.dtype} boxes over {memref}")
    if not 1 <= memref.rank <= 5 or len(spec.box) != memref.rank:
        raise CUDAError(f"a TMA descriptor of {len(spec.box)}-d boxes over {memref}: tensor "
                        "maps have 1 to 5 dims, as many as their boxes")
    element = numpy_dtype(memref.dtype).itemsize
    strides = [s * element for s in contiguous_strides(memref.shape)][:-1]
    inner_bytes = spec.box[-1] * element
    if any(s % 16 for s in strides) or any(not 1 <= b <= 256 for b in spec.box) \
            or inner_bytes % 16 or (spec.swizzle_bytes and inner_bytes > spec.swizzle_bytes) \
            or spec.swizzle_bytes not in _SWIZZLES:
        raise CUDAError(f"cuTensorMapEncodeTiled refuses boxes of {spec.box} over {memref}: "
                        "rows of a multiple of 16 bytes, boxes of 1 to 256 elements per dim "
                        "whose rows are a multiple of 16 bytes and, when swizzled, at most "
                        "the swizzle span")
    return TensorMapParameters(
        data_type=f"CU_TENSOR_MAP_DATA_TYPE_{_TENSOR_MAP_TYPES[memref.dtype]}",
        rank=memref.rank,
        global_dim=tuple(reversed(memref.shape)),
        global_strides=tuple(reversed(strides)),
        box_dim=tuple(reversed(spec.box)),
        element_strides=(1,) * memref.rank,
        swizzle=f"CU_TENSOR_MAP_SWIZZLE_{_SWIZZLES[spec.swizzle_bytes]}")


# The size of a CUtensorMap, which the kernel reads from device memory.
TENSOR_MAP_BYTES = 128


# ---------------------------------------------------------------------------
# Choosing the image.


def choose_image(chip: str, specific: bool, device_capability: tuple[int, int],
                 device_name: str) -> str:
    """"cubin" when the GPU runs the target's machine code, "ptx" when the
    driver must compile the PTX for it (a newer GPU); raises CUDAError
    when it cannot run the target's code at all (an older GPU, or another
    GPU than an architecture-specific target's)."""
    target = divmod(int(re.sub(r"\D", "", chip)), 10)
    if device_capability == target:
        return "cubin"
    if device_capability > target and not specific:
        return "ptx"
    major, minor = device_capability
    raise CUDAError(f"the GPU ({device_name}, compute capability {major}.{minor}) cannot run "
                    f"code for {chip}")


# ---------------------------------------------------------------------------
# The driver.


def _driver_module():
    try:
        from cuda.bindings import driver as cuda
    except ImportError:
        raise CUDAError("no CUDA driver/GPU found (the Python package cuda-bindings is "
                        "missing: install Lamina's optional extra 'cuda')") from None
    return cuda


def _error_name(cuda, status) -> str:
    found, name = cuda.cuGetErrorName(status)
    return name.decode() if found == cuda.CUresult.CUDA_SUCCESS and name else str(status)


def check(cuda, result, call: str):
    """The values a driver call returns after its status; raises CUDAError
    naming the call when the status is not success."""
    status, *values = result
    if status != cuda.CUresult.CUDA_SUCCESS:
        raise CUDAError(f"{call} failed: {_error_name(cuda, status)}")
    return values[0] if len(values) == 1 else values


# The GPU the driver runs on: the first.
DEVICE_ORDINAL = 0


class Driver:
    """The CUDA driver, the first GPU and its primary context."""

    def __init__(self):
        cuda = self.cuda = _driver_module()
        try:
            (status,) = cuda.cuInit(0)
        except Exception as error:  # the bindings raise when libcuda.so cannot be loaded
            raise CUDAError("no CUDA driver/GPU found (libcuda.so, the NVIDIA driver, cannot "
                            f"be loaded: {type(error).__name__}); run the kernels on the CPU "
                            "with --emulate or the target's emulation()") from None
        if status != cuda.CUresult.CUDA_SUCCESS:
            raise CUDAError(f"no CUDA driver/GPU found (cuInit: {_error_name(cuda, status)}); "
                            "run the kernels on the CPU with --emulate or the target's "
                            "emulation()")
        if check(cuda, cuda.cuDeviceGetCount(), "cuDeviceGetCount") < 1:
            raise CUDAError("no CUDA driver/GPU found (the driver sees no GPU); run the "
                            "kernels on the CPU with --emulate or the target's emulation()")
        self.device = check(cuda, cuda.cuDeviceGet(DEVICE_ORDINAL), "cuDeviceGet")
        self.context = check(cuda, cuda.cuDevicePrimaryCtxRetain(self.device),
                             "cuDevicePrimaryCtxRetain")
        self.make_current()
        raw = check(cuda, cuda.cuDeviceGetName(256, self.device), "cuDeviceGetName")
        self.name = raw.split(b"\0", 1)[0].decode(errors="replace")
        attribute = cuda.CUdevice_attribute
        self.capability = (self.attribute(attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
                           self.attribute(attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR))
        self.shared_memory_optin = self.attribute(
            attribute.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)

    def attribute(self, which) -> int:
        return check(self.cuda, self.cuda.cuDeviceGetAttribute(which, self.device),
                     f"cuDeviceGetAttribute({which.name})")

    def make_current(self) -> None:
        check(self.cuda, self.cuda.cuCtxSetCurrent(self.context), "cuCtxSetCurrent")

    def call(self, name: str, *args):
        """`cuda.NAME(*args)`, checked."""
        return check(self.cuda, getattr(self.cuda, name)(*args), name)

    def allocate(self, size: int) -> int:
        return int(self.call("cuMemAlloc", max(size, 1)))

    def free(self, address: int) -> None:
        self.call("cuMemFree", address)

    def tensor_map(self, address: int, p: TensorMapParameters) -> int:
        """A CUtensorMap over device memory at `address`, copied to device
        memory; returns its device address (free it with `free`)."""
        cuda = self.cuda
        tensor_map = self.call(
            "cuTensorMapEncodeTiled", getattr(cuda.CUtensorMapDataType, p.data_type), p.rank,
            address, [cuda.cuuint64_t(d) for d in p.global_dim],
            [cuda.cuuint64_t(s) for s in p.global_strides],
            [cuda.cuuint32_t(b) for b in p.box_dim],
            [cuda.cuuint32_t(e) for e in p.element_strides],
            cuda.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
            getattr(cuda.CUtensorMapSwizzle, p.swizzle),
            cuda.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_NONE,
            cuda.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE)
        device_copy = self.allocate(TENSOR_MAP_BYTES)
        self.call("cuMemcpyHtoD", device_copy, tensor_map.getPtr(), TENSOR_MAP_BYTES)
        return device_copy


@functools.lru_cache(maxsize=None)
def _the_driver() -> Driver:
    return Driver()


def driver() -> Driver:
    """The process's driver, initialised once; raises CUDAError when there
    is no driver or GPU."""
    try:
        found = _the_driver()
    except CUDAError:
        _the_driver.cache_clear()
        raise
    found.make_current()
    return found


# ---------------------------------------------------------------------------
# Compiled functions.


class LoadedKernel:
    """A kernel of the loaded module, ready to launch."""

    def __init__(self, gpu: Driver, module, spec: KernelSpec, parameters: int | None):
        self.spec = spec
        self.parameters = parameters
        self.function = gpu.call("cuModuleGetFunction", module, spec.name.encode())
        attribute = gpu.cuda.CUfunction_attribute
        static = gpu.call("cuFuncGetAttribute", attribute.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                          self.function)
        if static + spec.dynamic_shared_memory > gpu.shared_memory_optin:
            raise CUDAError(f"kernel {spec.name} needs {static + spec.dynamic_shared_memory} "
                            f"bytes of shared memory; the GPU ({gpu.name}) gives a block at "
                            f"most {gpu.shared_memory_optin}")
        threads = math.prod(spec.block)
        most = gpu.call("cuFuncGetAttribute", attribute.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                        self.function)
        if threads > most:
            raise CUDAError(f"kernel {spec.name} cannot launch blocks of {threads} threads on "
                            f"the GPU ({gpu.name}): with its registers, at most {most}")
        # Above 48 KiB, dynamic shared memory must be asked for.
        gpu.call("cuFuncSetAttribute", self.function,
                 attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                 spec.dynamic_shared_memory)


@dataclass
class GPUProgram:
    """What the GPU runtime loads for an entry function (`CUDATarget.build`,
    no GPU needed): its name and NumPy-facing types, its host program,
    its kernels as the manifest describes them, their PTX and, where
    ptxas is present, cubin, for the architecture `chip`; `manifest` is
    the kernel manifest itself (with ptxas's resources)."""

    name: str
    inputs: list
    results: list
    host: HostProgram
    kernels: dict[str, KernelSpec]
    ptx: str
    cubin: bytes | None
    chip: str
    specific: bool = False
    module: ir.Module | None = None
    manifest: dict | None = None

    def save(self, path: str) -> None:
        """Writes the program to a JSON file that `load` reads back, on a
        machine with a GPU and no compiler toolchain: compile where LLVM
        and ptxas are, run where the GPU is. Everything but the module."""
        document = {
            "format": PROGRAM_FORMAT, "name": self.name, "chip": self.chip,
            "specific": self.specific,
            "inputs": [_type_record(t) for t in self.inputs],
            "results": [_type_record(t) for t in self.results],
            "host": {"parameters": [_type_record(t) for t in self.host.parameters],
                     "values": self.host.values, "memory_plan": self.host.memory_plan,
                     "steps": [_step_record(step) for step in self.host.steps]},
            "kernels": [_kernel_record(spec) for spec in self.kernels.values()],
            "ptx": self.ptx,
            "cubin": base64.b64encode(self.cubin).decode() if self.cubin is not None else None,
            "manifest": self.manifest,
        }
        with open(path, "w") as f:
            json.dump(document, f)

    @classmethod
    def load(cls, path: str) -> "GPUProgram":
        """A program `save` wrote; raises CUDAError for a file that is not one."""
        try:
            with open(path) as f:
                d = json.load(f)
            if d.get("format") != PROGRAM_FORMAT:
                raise ValueError(f"format {d.get('format')!r}, not {PROGRAM_FORMAT}")
            host = HostProgram(d["name"], [_type_from(r) for r in d["host"]["parameters"]],
                               [_step_from(r) for r in d["host"]["steps"]],
                               int(d["host"]["values"]), d["host"].get("memory_plan"))
            kernels = {r["name"]: _kernel_from(r) for r in d["kernels"]}
            cubin = base64.b64decode(d["cubin"]) if d["cubin"] is not None else None
            return cls(d["name"], [_type_from(r) for r in d["inputs"]],
                       [_type_from(r) for r in d["results"]], host, kernels, d["ptx"], cubin,
                       d["chip"], bool(d["specific"]), manifest=d["manifest"])
        except OSError as error:
            raise CUDAError(f"cannot read the GPU program {path}: {error.strerror}") from None
        except (ValueError, KeyError, TypeError) as error:
            raise CUDAError(f"{path} is not a GPU program Lamina saved: {error}") from None

    def image(self, capability: tuple[int, int], device_name: str) -> tuple[str, bytes]:
        """The kind ("cubin" or "ptx") and bytes of the image a GPU of
        compute capability `capability` loads."""
        kind = choose_image(self.chip, self.specific, capability, device_name)
        if kind == "cubin" and self.cubin is not None:
            return kind, self.cubin
        return "ptx", self.ptx.encode() + b"\0"


PROGRAM_FORMAT = "lamina-gpu-program-1"


def _type_record(t: TensorType | MemRefType) -> dict:
    if isinstance(t, MemRefType):
        return {"memref": list(t.shape), "dtype": t.dtype, "space": t.space}
    return {"tensor": list(t.shape), "dtype": t.dtype}


def _type_from(record: dict) -> TensorType | MemRefType:
    if "memref" in record:
        return MemRefType(tuple(record["memref"]), record["dtype"], record["space"])
    return TensorType(tuple(record["tensor"]), record["dtype"])


def _step_record(step) -> dict:
    if isinstance(step, Alloc):
        return {"alloc": step.result, "type": _type_record(step.type)}
    if isinstance(step, View):
        return {"view": step.result, "source": step.source, "type": _type_record(step.type),
                "offset": step.offset}
    if isinstance(step, Constant):
        return {"constant": step.result, "type": step.type, "value": step.value}
    if isinstance(step, Copy):
        return {"copy": step.source, "target": step.target}
    return {"launch": step.kernel, "grid": list(step.grid), "block": list(step.block),
            "arguments": list(step.arguments)}


def _step_from(r: dict):
    if "alloc" in r:
        return Alloc(int(r["alloc"]), _type_from(r["type"]))
    if "view" in r:
        return View(int(r["view"]), int(r["source"]), _type_from(r["type"]),
                    int(r.get("offset", 0)))
    if "constant" in r:
        if r["type"] not in _SCALARS:
            raise ValueError(f"a constant of type {r['type']}")
        return Constant(int(r["constant"]), r["type"], r["value"])
    if "copy" in r:
        return Copy(int(r["copy"]), int(r["target"]))
    return Launch(str(r["launch"]), tuple(int(g) for g in r["grid"]),
                  tuple(int(b) for b in r["block"]), tuple(int(a) for a in r["arguments"]))


def _kernel_record(spec: KernelSpec) -> dict:
    return {"name": spec.name, "block": list(spec.block),
            "dynamic_shared_memory": spec.dynamic_shared_memory, "registers": spec.registers,
            "tensor_maps": [{"argument": m.argument, "box": list(m.box), "dtype": m.dtype,
                             "swizzle_bytes": m.swizzle_bytes} for m in spec.tensor_maps]}


def _kernel_from(r: dict) -> KernelSpec:
    maps = tuple(TensorMapSpec(int(m["argument"]), tuple(int(b) for b in m["box"]),
                               str(m["dtype"]), int(m["swizzle_bytes"]))
                 for m in r["tensor_maps"])
    return KernelSpec(str(r["name"]), tuple(int(b) for b in r["block"]),
                      int(r["dynamic_shared_memory"]), maps, r["registers"])


# Whether a CUDA function replays CUDA graphs unless told (`graphs=`):
# LAMINA_CUDA_GRAPHS=0 turns them off.
GRAPHS_VARIABLE = "LAMINA_CUDA_GRAPHS"
# The address sets a function keeps launches prepared (and graphs
# captured) for, the least recently used dropped first.
PREPARED_ADDRESS_SETS = 8


def graphs_by_default() -> bool:
    return os.environ.get(GRAPHS_VARIABLE, "1").strip().lower() not in ("0", "off", "false", "no")


class PreparedLaunches:
    """The launch graph bound to device addresses of its inputs and
    outputs (and the function's arena): each launch's packed parameters
    and tensor maps, made once; and, once captured, the CUDA graph that
    replays them (`executable`). `free()` releases the tensor maps and
    the graph."""

    def __init__(self, function: "CUDAFunction", addresses: tuple[int, ...]):
        self.function = function
        gpu = self.gpu = function.gpu
        graph = function.graph
        inputs = len(graph.inputs)
        bases = {ARENA: [function.arena]}
        bases[INPUT] = list(addresses[:inputs])
        bases[OUTPUT] = list(addresses[inputs:])
        self.commands: list[tuple] = []
        self.parameters: list[PackedParameters] = []
        self.tensor_maps: list[int] = []
        self.executable = None
        self.capture_failed = False
        try:
            for command in graph.commands:
                if isinstance(command, BufferCopy):
                    self.commands.append(("cuMemcpyDtoDAsync", _address(command.target, bases),
                                          _address(command.source, bases),
                                          command.source.nbytes))
                    continue
                kernel = function.kernels[command.kernel]
                values = []
                for argument in command.arguments:
                    if isinstance(argument, Constant):
                        values.append(scalar_parameter(argument.type, argument.value))
                    else:
                        values.extend(memref_parameters(_address(argument, bases), argument.type))
                for spec in command.tensor_maps:
                    slot = command.arguments[spec.argument]
                    tensor_map = gpu.tensor_map(_address(slot, bases),
                                                tensor_map_parameters(slot.type, spec))
                    self.tensor_maps.append(tensor_map)
                    values.append(ctypes.c_uint64(tensor_map))
                if kernel.parameters is not None and kernel.parameters != len(values):
                    raise CUDAError(f"kernel {command.kernel} takes {kernel.parameters} "
                                    f"parameters; its launch packs {len(values)}")
                packed = PackedParameters(values)
                self.parameters.append(packed)
                self.commands.append(("cuLaunchKernel", kernel.function, *command.grid,
                                      *command.block, command.shared_bytes, packed.address))
        except BaseException:
            self.free()
            raise

    def enqueue(self, stream) -> None:
        """The commands, launched on `stream` one by one."""
        for command in self.commands:
            if command[0] == "cuLaunchKernel":
                self.gpu.call(*command[:-1], stream, command[-1], 0)
            else:
                self.gpu.call(*command, stream)

    def run(self, stream, graphs: bool) -> None:
        """The commands on `stream`: with `graphs`, a replay of the CUDA
        graph captured on the first run (a capture the driver refuses
        falls back, for good, to launching one by one)."""
        if graphs and self.executable is None and not self.capture_failed:
            self.capture(stream)
        if graphs and self.executable is not None:
            self.gpu.call("cuGraphLaunch", self.executable, stream)
        else:
            self.enqueue(stream)

    def capture(self, stream) -> None:
        cuda = self.gpu.cuda
        try:
            self.gpu.call("cuStreamBeginCapture", stream,
                          cuda.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
        except CUDAError:
            self.capture_failed = True
            return
        graph = None
        try:
            try:
                self.enqueue(stream)
            finally:
                graph = self.gpu.call("cuStreamEndCapture", stream)
            self.executable = self.gpu.call("cuGraphInstantiate", graph, 0)
        except CUDAError:
            self.capture_failed = True
        finally:
            if graph is not None:
                self.gpu.call("cuGraphDestroy", graph)

    def free(self) -> None:
        if self.executable is not None:
            self.gpu.call("cuGraphExecDestroy", self.executable)
            self.executable = None
        for address in self.tensor_maps:
            self.gpu.free(address)
        self.tensor_maps = []


def _address(slot: Slot, bases: dict) -> int:
    return bases[slot.region][slot.index] + slot.offset


class DeviceBuffer:
    """Device memory of a CUDA function's result, given out through
    DLPack; back to its function's pool when no tensor holds it, so that
    the next call's results take the same addresses (and replay the same
    graph)."""

    def __init__(self, function: "CUDAFunction", address: int, nbytes: int):
        self.function = function
        self.address = address
        self.nbytes = nbytes

    def __del__(self):
        self.function._pool.setdefault(self.nbytes, []).append(self.address)


class CUDAFunction(DLPackCalls, ArrayFunction):
    """An entry function whose kernels run on the GPU (see the module
    docstring): its launch graph (`graph`) launched on one stream, its
    intermediates in one arena allocated at load. NumPy arguments are
    copied to device buffers allocated once and the results copied back;
    DLPack tensors on the GPU are used in place and the results are
    tensors of the same kind on the GPU. With `graphs` (the default, off
    with LAMINA_CUDA_GRAPHS=0) a call on addresses seen before replays a
    CUDA graph. `bind` prepares a call on given arrays, for running it
    repeatedly (benchmarks); `image_kind` says whether the cubin or the
    PTX was loaded."""

    dlpack_devices = (CUDA, CPU, CUDA_HOST)

    def __init__(self, program: GPUProgram, compile_seconds: float = 0.0,
                 graphs: bool | None = None, gpu: "Driver | None" = None):
        super().__init__(program.name, program.inputs, program.results, program.module,
                         compile_seconds)
        host = program.host
        if len(host.parameters) != len(self.inputs) + len(self.results):
            raise CUDAError(f"the host program of @{self.name} takes {len(host.parameters)} "
                            f"buffers, not {len(self.inputs)} arguments and "
                            f"{len(self.results)} results")
        self.program = host
        self.memory_plan = host.memory_plan
        self.graph = LaunchGraph.from_host(host, program.kernels, len(self.inputs))
        self.graphs = graphs_by_default() if graphs is None else graphs
        self.gpu = gpu or driver()
        self.image_kind, image = program.image(self.gpu.capability, self.gpu.name)
        try:
            self.cu_module = self.gpu.call("cuModuleLoadData", image)
        except CUDAError:
            if self.image_kind != "cubin":
                raise
            # A driver older than ptxas may refuse its cubin; it compiles the PTX.
            self.image_kind = "ptx"
            self.cu_module = self.gpu.call("cuModuleLoadData", program.ptx.encode() + b"\0")
        counts = entry_parameter_counts(program.ptx)
        self.kernels = {}
        for launch in self.graph.launches:
            if launch.kernel not in self.kernels:
                self.kernels[launch.kernel] = LoadedKernel(self.gpu, self.cu_module,
                                                           program.kernels[launch.kernel],
                                                           counts.get(launch.kernel))
        self.stream = self.gpu.call("cuStreamCreate", 0)
        try:
            self.dlpack_stream = int(self.stream)
        except (TypeError, ValueError):
            self.dlpack_stream = None
        self.arena = self.gpu.allocate(self.graph.arena_bytes)
        # NumPy arguments and results go through these, allocated once.
        self._staging = [self.gpu.allocate(_bytes(m))
                         for m in self.graph.inputs + self.graph.outputs]
        self._prepared: dict[tuple[int, ...], PreparedLaunches] = {}
        # Result buffers no tensor holds any more, by size.
        self._pool: dict[int, list[int]] = {}

    def prepared(self, addresses: tuple[int, ...]) -> PreparedLaunches:
        """The launches bound to these input and output addresses, made on
        first use and kept for the last few address sets."""
        found = self._prepared.pop(addresses, None)
        if found is None:
            found = PreparedLaunches(self, addresses)
            if len(self._prepared) >= PREPARED_ADDRESS_SETS:
                oldest = next(iter(self._prepared))
                self._prepared.pop(oldest).free()
        self._prepared[addresses] = found
        return found

    def bind(self, arrays: Sequence[np.ndarray], results: Sequence[np.ndarray]) -> "DeviceCall":
        """The call on checked arrays (see `check_arguments`): the inputs
        copied to the device, its launches prepared."""
        return DeviceCall(self, arrays, results)

    def call_with_results(self, arrays: Sequence[np.ndarray], results: Sequence[np.ndarray]):
        with self.bind(arrays, results) as call:
            call.run()
            call.read_back()

    def call_on_views(self, values: Sequence) -> list[DLPackBuffer]:
        """A call on DLPack views (and arrays): device tensors in place,
        host ones copied to the staging buffers; the results in device
        memory from the pool, the call left running on the stream. With
        no tensor on the GPU, a call on host memory as with NumPy arrays,
        its results host tensors."""
        if not any(isinstance(v, TensorView) and v.device[0] == CUDA for v in values):
            return super().call_on_views(values)
        addresses = []
        for index, value in enumerate(values):
            if isinstance(value, TensorView) and value.device[0] == CUDA:
                if value.device[1] != DEVICE_ORDINAL:
                    raise ValueError(f"@{self.name} argument #{index}: a tensor on "
                                     f"cuda:{value.device[1]}; this function runs on "
                                     f"cuda:{DEVICE_ORDINAL}")
                addresses.append(value.pointer)
                continue
            array = value.host_array() if isinstance(value, TensorView) else value
            address = self._staging[index]
            self.gpu.call("cuMemcpyHtoDAsync", address, array.ctypes.data, array.nbytes,
                          self.stream)
            addresses.append(address)
        buffers = []
        for memref in self.graph.outputs:
            size = _bytes(memref)
            free = self._pool.get(size)
            address = free.pop() if free else self.gpu.allocate(size)
            buffers.append(DeviceBuffer(self, address, size))
        self.prepared(tuple(addresses) + tuple(b.address for b in buffers)).run(
            self.stream, self.graphs)
        return [DLPackBuffer(b.address, (CUDA, DEVICE_ORDINAL), t.dtype, t.shape, b,
                             self._make_wait)
                for b, t in zip(buffers, self.results)]

    def _make_wait(self, stream: int) -> None:
        """Makes `stream` (a consumer's, DLPack's handle) wait for the work
        enqueued so far on the function's stream."""
        cuda = self.gpu.cuda
        event = self.gpu.call("cuEventCreate", cuda.CUevent_flags.CU_EVENT_DISABLE_TIMING)
        try:
            self.gpu.call("cuEventRecord", event, self.stream)
            self.gpu.call("cuStreamWaitEvent", cuda.CUstream(stream), event, 0)
        finally:
            self.gpu.call("cuEventDestroy", event)


class DeviceCall:
    """A call on NumPy arrays, its inputs copied to the function's staging
    buffers and its launches prepared: `run()` enqueues them (a graph
    replay with `graphs`), `synchronize()` waits for the stream,
    `read_back()` copies the results and the arguments written in place
    to their arrays, `time()` measures runs with CUDA events. A context
    manager, as the memory is the function's."""

    def __init__(self, function: CUDAFunction, arrays, results):
        self.function = function
        self.gpu = function.gpu
        self.host = list(arrays) + list(results)
        self.addresses = list(function._staging)
        for array, address in zip(arrays, self.addresses):
            self.gpu.call("cuMemcpyHtoDAsync", address, array.ctypes.data, array.nbytes,
                          function.stream)
        self.launches = function.prepared(tuple(self.addresses))

    def run(self) -> None:
        self.launches.run(self.function.stream, self.function.graphs)

    def synchronize(self) -> None:
        self.gpu.call("cuStreamSynchronize", self.function.stream)

    def read_back(self) -> None:
        arguments = len(self.function.inputs)
        for index, array in enumerate(self.host):
            in_place = index < arguments and isinstance(self.function.inputs[index], MemRefType)
            if index >= arguments or in_place:
                self.gpu.call("cuMemcpyDtoHAsync", array.ctypes.data, self.addresses[index],
                              array.nbytes, self.function.stream)
        self.synchronize()

    def time(self, runs: int = 20, warmup: int = 3) -> list[float]:
        """Seconds per run of the launches, measured with CUDA events
        after `warmup` runs."""
        cuda = self.gpu.cuda
        stream = self.function.stream
        for _ in range(warmup):
            self.run()
        start = self.gpu.call("cuEventCreate", 0)
        end = self.gpu.call("cuEventCreate", 0)
        times = []
        try:
            for _ in range(runs):
                self.gpu.call("cuEventRecord", start, stream)
                self.run()
                self.gpu.call("cuEventRecord", end, stream)
                self.gpu.call("cuEventSynchronize", end)
                times.append(self.gpu.call("cuEventElapsedTime", start, end) / 1e3)
        finally:
            check(cuda, cuda.cuEventDestroy(start), "cuEventDestroy")
            check(cuda, cuda.cuEventDestroy(end), "cuEventDestroy")
        return times

    def host_seconds(self, runs: int = 200) -> float:
        """Median host time of enqueuing one run (a graph replay with
        `graphs`), the stream drained between runs."""
        times = []
        for _ in range(runs):
            start = time.perf_counter()
            self.run()
            times.append(time.perf_counter() - start)
            self.synchronize()
        return statistics.median(times)

    def median_seconds(self, runs: int = 20) -> float:
        return statistics.median(self.time(runs))

    def __enter__(self) -> "DeviceCall":
        return self

    def __exit__(self, *exc) -> None:
        pass


def _bytes(memref: MemRefType) -> int:
    return math.prod(memref.shape) * numpy_dtype(memref.dtype).itemsize
