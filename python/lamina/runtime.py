"""Running compiled programs: NumPy arrays in, NumPy arrays out.

`jit_compile(module, entry, pipeline, shared_libs)` runs a target's
pipeline through its last MLIR stage (which must produce the LLVM
dialect), JIT-compiles the result with upstream's `ExecutionEngine` (at
the target's LLVM optimisation level, -O2 by default; the host CPU), with the target's runtime libraries loaded, and
returns a `CompiledFunction`; a target's `compile()` supplies both:

    f = lamina.get_target("cpu").compile(lamina.parse("model.mlir"))
    y = f(x, w)               # one array for one result, a tuple for several

Arrays are passed without copies: each argument becomes a memref
descriptor pointing at the array's own buffer (a non-contiguous array is
made contiguous first), and results are written by the compiled code into
arrays allocated here (the pipeline turns results into out-parameters).
Arguments are checked against the entry function's signature: count,
element type (exactly; no silent casts) and shape.

An argument that is a memref in global memory (the entry of an hw program)
is passed in place: the compiled code may write it, which is how kernels
return their results, so it must be a writeable, C-contiguous array.

Weights as data: the constant globals of more than 4 KiB in the LLVM
dialect (a model's weights, folded and laid out by the pipeline) are not
compiled into the code: `bind_constant_globals` makes them external and
the JIT binds their symbols to aligned arrays that the compiled function
owns (`constants`).

Element types: f32, f64, f16 (`np.float16`), bf16 (`ml_dtypes.bfloat16`),
i1 (`np.bool_`), i8, i16, i32, i64.

Weights bound once: `g = f.bind(weights)` compiles the program again with
those arguments bound (`lamina.bound`), split in two by the pipeline's
`func-split-initializer` (an initialiser computing from the weights alone
what the program computes from them: transposed and scaled filters,
folded batch norms; and the program taking the rest and the prepared
weights), runs the initialiser once and returns a `BoundFunction` that
owns the prepared weights and takes the other arguments:

    f = lamina.compile(module)
    g = f.bind(lamina.importers.torch_import.weights(module, model))   # the leading arguments
    g = f.bind({"conv1.weight": w, 2: b})     # by `lamina.parameter` name or by position
    y = g(x)

This module knows no target: targets import it, not the other way round.
"""

from __future__ import annotations

import ctypes
import functools
import os
import platform
import struct
import time
from typing import Callable, Mapping, Sequence

import numpy as np
from mlir import ir

from mlir.execution_engine import ExecutionEngine

from lamina.diagnostics import CompileError, Diagnostic
from lamina.parsing import parse
from lamina.passes.cpu_check_lowered_to_llvm import check_llvm_dialect
from lamina.passes.func_split_initializer import (BOUND, INITIALIZER, FuncSplitInitializer,
                                                  argument_attributes)
from lamina.shapes import ShapeFunction, is_dynamic
from lamina.types import MemRefType, TensorType, VerifyError, numpy_dtype


# ---------------------------------------------------------------------------
# Entry functions and signatures.


def functions(module: ir.Module) -> list[ir.Operation]:
    """The `func.func` ops with a body at the top of `module`."""
    found = []
    for op in module.body.operations:
        op = op.operation
        if op.name == "func.func" and op.regions[0].blocks:
            found.append(op)
    return found


def _symbol(func: ir.Operation) -> str:
    return ir.StringAttr(func.attributes["sym_name"]).value


def _is_public(func: ir.Operation) -> bool:
    return ("sym_visibility" not in func.attributes
            or ir.StringAttr(func.attributes["sym_visibility"]).value == "public")


def find_entry(module: ir.Module, entry: str | None = None) -> ir.Operation:
    """The function named `entry`; by default `main`, or else the only
    public function. Raises CompileError naming the candidates."""
    candidates = functions(module)
    if entry is not None:
        for func in candidates:
            if _symbol(func) == entry:
                return func
        names = ", ".join("@" + _symbol(f) for f in candidates) or "none"
        raise CompileError.at(module.operation.location,
                        f"no function @{entry} in the module (functions: {names})")
    public = [f for f in candidates if _is_public(f)]
    for func in public:
        if _symbol(func) == "main":
            return func
    if len(public) == 1:
        return public[0]
    names = ", ".join("@" + _symbol(f) for f in public) or "none"
    raise CompileError.at(module.operation.location,
                    f"cannot choose the entry function: no @main and {len(public)} public "
                    f"functions ({names}); name one with --entry / entry=")


def signature(func: ir.Operation) -> tuple[list[TensorType | MemRefType], list[TensorType]]:
    """The argument and result types of a function: tensors, and memrefs in
    global memory among the arguments (passed in place: the callee may
    write them). Raises CompileError for a type that cannot cross the
    NumPy boundary."""
    function_type = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    converted = []
    for what, types in (("argument", function_type.inputs), ("result", function_type.results)):
        group = []
        for index, t in enumerate(types):
            try:
                if what == "argument" and isinstance(t, ir.MemRefType):
                    memref = MemRefType.from_mlir(t)
                    if memref.space != "global":
                        raise VerifyError(f"{t} is not in global memory")
                    group.append(memref)
                else:
                    group.append(TensorType.from_mlir(t, dynamic=True))
            except VerifyError as error:
                raise CompileError.at(func.location,
                                f"{what} #{index} of @{_symbol(func)}: {error}; only ranked "
                                "tensors (and, as arguments, memrefs in global memory) "
                                "can be passed to and from NumPy") from None
        converted.append(group)
    return converted[0], converted[1]


# The argument attributes that name an argument (the importers': a
# weight's `lamina.parameter`, an ONNX graph input's `lamina.input`).
NAME_ATTRIBUTES = ("lamina.parameter", "lamina.input")


def argument_names(func: ir.Operation) -> list[str | None]:
    """The name of each argument of `func` (see NAME_ATTRIBUTES), or None."""
    names = []
    for attributes in argument_attributes(func):
        found = [attributes[key] for key in NAME_ATTRIBUTES if key in attributes]
        names.append(ir.StringAttr(found[0]).value if found else None)
    return names


# ---------------------------------------------------------------------------
# Memref descriptors.


@functools.lru_cache(maxsize=None)
def descriptor_class(rank: int) -> type[ctypes.Structure]:
    """MLIR's ranked memref descriptor for `rank`: allocated and aligned
    pointers, offset, sizes and strides (in elements)."""
    fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
              ("offset", ctypes.c_int64)]
    if rank:
        fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
    return type(f"MemRefDescriptor{rank}D", (ctypes.Structure,), {"_fields_": fields})


def descriptor(array: np.ndarray) -> ctypes.Structure:
    """A descriptor of a C-contiguous array's buffer (no copy)."""
    desc = descriptor_class(array.ndim)()
    desc.allocated = desc.aligned = array.ctypes.data
    desc.offset = 0
    if array.ndim:
        stride = 1
        strides = []
        for size in reversed(array.shape):
            strides.append(stride)
            stride *= size
        desc.sizes[:] = array.shape
        desc.strides[:] = strides[::-1]
    return desc


# The alignment of the prepared weights: a cache line, so that the vector
# loads of a filter row or a packed panel do not straddle two.
WEIGHT_ALIGNMENT = 64


def aligned_empty(shape: Sequence[int], dtype: np.dtype,
                  alignment: int = WEIGHT_ALIGNMENT) -> np.ndarray:
    """An uninitialised C-contiguous array whose data starts at a multiple
    of `alignment` bytes (NumPy's own arrays start at 16)."""
    dtype = np.dtype(dtype)
    count = int(np.prod(shape, dtype=np.int64))
    buffer = np.empty(count * dtype.itemsize + alignment, np.uint8)
    start = -buffer.ctypes.data % alignment
    return buffer[start:start + count * dtype.itemsize].view(dtype).reshape(shape)


# ---------------------------------------------------------------------------
# Compiled functions.


class ArrayFunction:
    """A compiled entry function, callable on NumPy arrays, whatever runs
    it. `inputs` and `results` are its tensor types (memref types for
    arguments passed in place); `compile_seconds` the time taken by the
    pipeline and the loading of the code. Subclasses run it
    (`call_with_results`)."""

    def __init__(self, name: str, inputs: Sequence[TensorType | MemRefType],
                 results: Sequence[TensorType], module: ir.Module | None = None,
                 compile_seconds: float = 0.0):
        self.name = name
        self.inputs = tuple(inputs)
        self.results = tuple(results)
        self.module = module
        self.compile_seconds = compile_seconds
        self._input_dtypes = [numpy_dtype(t.dtype) for t in self.inputs]
        self._result_dtypes = [numpy_dtype(t.dtype) for t in self.results]
        # The names of the arguments (`argument_names`), and what compiles
        # the program with some arguments bound: `binder(indices)` returns
        # its initialiser and its main function (set by the target).
        self.argument_names: tuple[str | None, ...] = (None,) * len(self.inputs)
        self.binder: Callable[[tuple[int, ...]], tuple["ArrayFunction", "ArrayFunction"]] | None \
            = None
        self._bound_programs: dict[tuple[int, ...], tuple[ArrayFunction, ArrayFunction]] = {}
        # The result shapes for the argument shapes of a call, for a
        # function with '?' dims (a lamina.shapes.ShapeFunction).
        self.shape_function: Callable[[Sequence[tuple[int, ...]]], list[tuple[int, ...]]] | None \
            = None

    def __repr__(self) -> str:
        args = ", ".join(str(t) for t in self.inputs)
        results = ", ".join(str(t) for t in self.results)
        return f"<compiled @{self.name}({args}) -> ({results})>"

    def check_arguments(self, args: Sequence) -> list[np.ndarray]:
        """The arguments as contiguous arrays of the expected types; raises
        TypeError (count, element type) or ValueError (shape)."""
        if len(args) != len(self.inputs):
            raise TypeError(f"@{self.name} takes {len(self.inputs)} argument(s) "
                            f"({', '.join(str(t) for t in self.inputs)}), got {len(args)}")
        arrays = []
        for index, (value, spec, dtype) in enumerate(zip(args, self.inputs, self._input_dtypes)):
            array = value if isinstance(value, np.ndarray) else np.asarray(value, dtype=dtype)
            if array.dtype != dtype:
                raise TypeError(f"@{self.name} argument #{index}: expected {spec} "
                                f"({dtype.name} elements), got a {array.dtype.name} array; "
                                f"convert it with .astype()")
            if len(array.shape) != spec.rank or any(
                    d is not None and d != size for d, size in zip(spec.shape, array.shape)):
                shape = ", ".join("?" if d is None else str(d) for d in spec.shape)
                shape = f"({shape},)" if spec.rank == 1 else f"({shape})"
                raise ValueError(f"@{self.name} argument #{index}: expected {spec} (shape "
                                 f"{shape}), got shape {array.shape}")
            if isinstance(spec, MemRefType) and not (array is value and array.flags.c_contiguous
                                                     and array.flags.writeable):
                raise ValueError(f"@{self.name} argument #{index}: {spec} is passed in place "
                                 "(the function may write it): give a writeable, C-contiguous "
                                 "NumPy array")
            # (np.ascontiguousarray would make a rank-0 array rank 1.)
            arrays.append(array if array.flags.c_contiguous else np.ascontiguousarray(array))
        return arrays

    def result_shapes(self, arrays: Sequence[np.ndarray] = ()) -> list[tuple[int, ...]]:
        """The result shapes of a call on `arrays` (checked arguments); for
        a function with '?' dims, by its shape function, which raises
        lamina.shapes.ShapeError (a ValueError) for sizes that break its
        rules."""
        if self.shape_function is not None:
            return self.shape_function([a.shape for a in arrays])
        return [t.shape for t in self.results]

    def allocate_results(self, arrays: Sequence[np.ndarray] = ()) -> list[np.ndarray]:
        """Uninitialised arrays for the results (of a call on `arrays`)."""
        return [np.empty(shape, dtype)
                for shape, dtype in zip(self.result_shapes(arrays), self._result_dtypes)]

    def __call__(self, *args):
        arrays = self.check_arguments(args)
        results = self.allocate_results(arrays)
        self.call_with_results(arrays, results)
        if len(results) == 1:
            return results[0]
        return tuple(results) if results else None

    def call_with_results(self, arrays: Sequence[np.ndarray], results: Sequence[np.ndarray]):
        """Runs on checked, contiguous arguments, writing preallocated
        contiguous result arrays (no checks: see `check_arguments`)."""
        raise NotImplementedError

    def bind(self, weights: Sequence | Mapping) -> "BoundFunction":
        """The function of the other arguments, with `weights` bound: a
        sequence binds the leading arguments (the weights an importer puts
        first), a mapping binds arguments by name (`lamina.parameter`,
        `lamina.input`) or position. What the program computes from the
        weights alone runs now, once, in an initialiser compiled with it;
        the result owns the prepared weights. Raises TypeError or
        ValueError for weights that do not fit, CompileError."""
        indices, arrays = self._bound_arguments(weights)
        if self.binder is None:
            raise TypeError(f"@{self.name} cannot bind weights: only functions that "
                            "lamina.compile made for the cpu target can")
        if indices not in self._bound_programs:
            self._bound_programs[indices] = self.binder(indices)
        initializer, main = self._bound_programs[indices]
        prepared = [aligned_empty(t.shape, numpy_dtype(t.dtype)) for t in initializer.results]
        initializer.call_with_results(initializer.check_arguments(arrays), prepared)
        bound = BoundFunction(main, initializer, prepared,
                              [self.argument_names[i] for i in range(len(self.inputs))
                               if i not in indices])
        if self.shape_function is not None:
            shape_function, weights = self.shape_function, dict(zip(indices, arrays))

            def shapes(unbound: Sequence[tuple[int, ...]]) -> list[tuple[int, ...]]:
                rest = iter(unbound)
                return shape_function([weights[i].shape if i in weights else next(rest)
                                       for i in range(len(self.inputs))])

            bound.shape_function = shapes
        return bound

    def _bound_arguments(self, weights) -> tuple[tuple[int, ...], list[np.ndarray]]:
        """The positions of the bound arguments, in order, and their arrays."""
        if isinstance(weights, np.ndarray):
            raise TypeError(f"@{self.name}: bind() takes a list of weights or a dict of them "
                            "by name or position, not one array")
        if isinstance(weights, Mapping):
            by_position = {}
            for key, value in weights.items():
                if isinstance(key, str):
                    if key not in self.argument_names:
                        names = ", ".join(n for n in self.argument_names if n) or "none"
                        raise ValueError(f"@{self.name} has no argument named '{key}' "
                                         f"(names: {names})")
                    key = self.argument_names.index(key)
                elif not isinstance(key, int) or not 0 <= key < len(self.inputs):
                    raise ValueError(f"@{self.name}: cannot bind argument {key!r} (arguments "
                                     f"are named or numbered 0 to {len(self.inputs) - 1})")
                if key in by_position:
                    raise ValueError(f"@{self.name}: argument #{key} is bound twice")
                by_position[key] = value
        else:
            weights = list(weights)
            if len(weights) > len(self.inputs):
                raise TypeError(f"@{self.name} takes {len(self.inputs)} argument(s), "
                                f"{len(weights)} weights given")
            by_position = dict(enumerate(weights))
        indices = tuple(sorted(by_position))
        if len(indices) == len(self.inputs):
            raise ValueError(f"@{self.name}: binding every argument leaves nothing to call with")
        arrays = []
        for index in indices:
            spec = self.inputs[index]
            if isinstance(spec, MemRefType):
                raise ValueError(f"@{self.name} argument #{index}: {spec} is passed in place and "
                                 "cannot be bound")
            array = np.asarray(by_position[index])
            if array.dtype != self._input_dtypes[index] or not spec.is_static or (
                    array.shape != spec.shape):
                raise ValueError(f"@{self.name} argument #{index}: expected {spec}, got a "
                                 f"{array.dtype.name} array of shape {array.shape}")
            arrays.append(array)
        return indices, arrays


class BoundFunction(ArrayFunction):
    """A compiled function with weights bound: it owns the weights its
    initialiser prepared (`prepared`) and takes the other arguments, in
    their order."""

    def __init__(self, main: ArrayFunction, initializer: ArrayFunction,
                 prepared: Sequence[np.ndarray], argument_names: Sequence[str | None]):
        unbound = len(main.inputs) - len(prepared)
        super().__init__(main.name, main.inputs[:unbound], main.results, main.module,
                         main.compile_seconds + initializer.compile_seconds)
        self.main = main
        self.initializer = initializer
        self.prepared = tuple(prepared)
        self.argument_names = tuple(argument_names)

    def call_with_results(self, arrays: Sequence[np.ndarray], results: Sequence[np.ndarray]):
        self.main.call_with_results(list(arrays) + list(self.prepared), results)


class CompiledFunction(ArrayFunction):
    """An entry function JIT-compiled for the host by upstream's
    ExecutionEngine (`engine`)."""

    def __init__(self, engine, name: str, inputs: Sequence[TensorType | MemRefType],
                 results: Sequence[TensorType], module: ir.Module | None = None,
                 compile_seconds: float = 0.0, constants: Sequence["BoundConstant"] = ()):
        super().__init__(name, inputs, results, module, compile_seconds)
        self.engine = engine
        # The large constants the code reads as data (bind_constant_globals).
        self.constants = tuple(constants)
        address = engine.raw_lookup("_mlir_ciface_" + name)
        if not address:
            raise CompileError([Diagnostic(None, 0, 0, "error",
                                           f"the JIT has no function @{name}")])
        self._function = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(address)

    def call_with_results(self, arrays: Sequence[np.ndarray], results: Sequence[np.ndarray]):
        descriptors = [descriptor(a) for a in list(arrays) + list(results)]
        pointers = [ctypes.pointer(d) for d in descriptors]
        packed = (ctypes.c_void_p * len(pointers))(
            *[ctypes.addressof(p) for p in pointers])
        self._function(packed)


@functools.lru_cache(maxsize=None)
def _library(path: str) -> ctypes.CDLL:
    """`path` loaded with local symbol visibility: its symbols (and those
    of the LLVM it links) stay out of the process's global namespace, where
    they would take the place of another LLVM's (Triton's, loaded by
    PyTorch) and crash it."""
    return ctypes.CDLL(path, mode=os.RTLD_LOCAL | os.RTLD_NOW)


def _exported_functions(path: str) -> list[str]:
    """The names of the functions the ELF shared library `path` defines
    and exports (its `.dynsym`), read without loading it."""
    with open(path, "rb") as file:
        data = file.read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise OSError(f"{path}: not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
                for i in range(shnum)]
    names = []
    for _, kind, _, _, offset, size, link, _, _, entsize in sections:
        if kind != 11:  # SHT_DYNSYM
            continue
        strings = sections[link][4]
        for at in range(offset + entsize, offset + size, entsize):
            name, info, _, shndx, _, _ = struct.unpack_from("<IBBHQQ", data, at)
            binding, symbol_type = info >> 4, info & 0xF
            if shndx != 0 and symbol_type == 2 and binding in (1, 2):  # defined global FUNC
                names.append(data[strings + name:data.index(b"\0", strings + name)].decode())
    return names


@functools.lru_cache(maxsize=None)
def runtime_symbols(libraries: tuple[str, ...]) -> dict[str, int]:
    """The address of every function the runtime `libraries` export, for
    the JIT to resolve calls with, including those that appear only when
    the LLVM dialect is translated (the OpenMP runtime's `__kmpc_*`)."""
    addresses = {}
    for path in libraries:
        library = _library(path)
        for name in _exported_functions(path):
            # C++ names (the LLVM the runner utilities link) are never
            # called by compiled code.
            if name not in addresses and not name.startswith("_Z"):
                addresses[name] = ctypes.cast(getattr(library, name), ctypes.c_void_p).value
    return addresses


def external_symbols(module: ir.Module, libraries: Sequence[str]) -> dict[str, int]:
    """The addresses of the runtime `libraries`' functions (see
    `runtime_symbols`). Raises CompileError for an external function of the
    LLVM-dialect `module` that neither they nor this process define (the
    JIT would fail late)."""
    addresses = runtime_symbols(tuple(libraries))
    process = ctypes.CDLL(None)
    for op in module.body.operations:
        op = op.operation
        if op.name != "llvm.func" or op.regions[0].blocks:
            continue
        name = ir.StringAttr(op.attributes["sym_name"]).value
        if name not in addresses and not hasattr(process, name):
            raise CompileError.at(op.location, f"external function '{name}' is not defined by "
                                               "the process or the target's runtime libraries")
    return addresses


def check_symbols(module: ir.Module, libraries: Sequence[str]) -> None:
    """Raises CompileError for an external function that neither this
    process nor the given runtime libraries define (the JIT would fail
    late)."""
    external_symbols(module, libraries)


def clone_module(module: ir.Module) -> ir.Module:
    """A copy of `module` in its context, with its locations. The copy is
    made in memory: attributes are uniqued in the context, so a model's
    weights are shared, not printed and parsed again."""
    with module.context:
        copy = ir.Module.create(module.operation.location)
        cloned = module.operation.clone()
        for op in list(cloned.regions[0].blocks[0].operations):
            copy.body.append(op.operation)
        for name in cloned.attributes:
            copy.operation.attributes[name] = cloned.attributes[name]
        cloned.erase()
    return copy


def entry_signature(module: ir.Module, entry: str | None
                    ) -> tuple[str, list[TensorType | MemRefType], list[TensorType]]:
    """The name, argument and result types of the entry function (see
    `find_entry` and `signature`); raises CompileError when it is private."""
    func = find_entry(module, entry)
    name = _symbol(func)
    if not _is_public(func):
        raise CompileError.at(func.location, f"@{name} is private; only public functions can be "
                                       "called from Python")
    inputs, results = signature(func)
    return name, inputs, results


# Constant globals of more bytes than this are data bound at load time, not
# code (see `bind_constant_globals`).
DATA_CONSTANT_BYTES = 4096


class BoundConstant:
    """A constant global of a compiled program held as data: its symbol,
    and the aligned array the code reads in its place."""

    def __init__(self, symbol: str, array: np.ndarray, alignment: int):
        self.symbol = symbol
        self.array = array
        self.alignment = alignment


def bind_constant_globals(lowered: ir.Module,
                          min_bytes: int = DATA_CONSTANT_BYTES) -> list[BoundConstant]:
    """Makes the large constant globals of an LLVM-dialect module (the
    weights of a model, after the pipeline folded and laid them out)
    external declarations, and returns their values as aligned arrays
    for the loader to bind their symbols to. LLVM then neither optimises
    nor emits megabytes of initialisers: the code reads the same bytes
    from the arrays. Globals of element types without a buffer format
    (bf16) stay as they are."""
    bound = []
    with lowered.context:
        external = ir.Attribute.parse("#llvm.linkage<external>")
        for op in lowered.body.operations:
            op = op.operation
            if op.name != "llvm.mlir.global" or "constant" not in op.attributes \
                    or "value" not in op.attributes:
                continue
            value = op.attributes["value"]
            if not isinstance(value, ir.DenseElementsAttr) or value.is_splat:
                continue
            try:
                data = np.asarray(memoryview(value))
            except (TypeError, ValueError, RuntimeError, BufferError):
                continue
            if data.dtype == np.bool_ or data.nbytes <= min_bytes:
                continue
            alignment = (ir.IntegerAttr(op.attributes["alignment"]).value
                         if "alignment" in op.attributes else 0)
            alignment = max(alignment, WEIGHT_ALIGNMENT)
            array = aligned_empty(data.shape, data.dtype, alignment)
            array[...] = data
            del op.attributes["value"]
            del op.attributes["constant"]
            op.attributes["linkage"] = external
            bound.append(BoundConstant(ir.StringAttr(op.attributes["sym_name"]).value, array,
                                       alignment))
    return bound


# Linux's arch_prctl request for permission to use an extended state
# component (asm/prctl.h), AMX's tile data component (its XSAVE feature
# number) and the system call's number on x86-64.
ARCH_REQ_XCOMP_PERM = 0x1023
XFEATURE_XTILEDATA = 18
_SYS_ARCH_PRCTL = 158


@functools.lru_cache(maxsize=None)
def request_amx_state() -> bool:
    """Asks Linux, once per process, to let this process use AMX's tile
    state; whether it may. Code with tile instructions runs only after
    this: without the permission the first one kills the process (SIGILL)."""
    if platform.system() != "Linux" or platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.syscall(ctypes.c_long(_SYS_ARCH_PRCTL), ctypes.c_long(ARCH_REQ_XCOMP_PERM),
                            ctypes.c_ulong(XFEATURE_XTILEDATA)) == 0
    except (OSError, AttributeError):
        return False


def _engine(lowered: ir.Module, shared_libs: Sequence[str], opt_level: int):
    """The ExecutionEngine of an LLVM-dialect module, with the runtime
    `shared_libs`' functions registered, and the large constants it binds
    to arrays (`bind_constant_globals`), which must outlive it."""
    check_llvm_dialect(lowered)
    addresses = external_symbols(lowered, shared_libs)
    constants = bind_constant_globals(lowered)
    with lowered.context:
        # The runtime libraries are not given to the engine, which would
        # load them into the global namespace (see `_library`): their
        # functions are registered by address instead.
        engine = ExecutionEngine(lowered, opt_level=opt_level)
        for symbol, address in addresses.items():
            engine.raw_register_runtime(symbol, ctypes.c_void_p(address))
        for constant in constants:
            engine.raw_register_runtime(constant.symbol, ctypes.c_void_p(constant.array.ctypes.data))
    return engine, constants


def _mark_bound(func: ir.Operation, bound: Sequence[int]) -> None:
    """Marks the arguments of `func` at positions `bound` (and no other)
    `lamina.bound`."""
    attributes = argument_attributes(func)
    if not bound and not any(BOUND in a for a in attributes):
        return
    with func.context:
        for index, attrs in enumerate(attributes):
            attrs.pop(BOUND, None)
            if index in bound:
                attrs[BOUND] = ir.UnitAttr.get()
        func.attributes["arg_attrs"] = ir.ArrayAttr.get([ir.DictAttr.get(a) for a in attributes])


def _copied(module: ir.Module | str) -> ir.Module:
    return parse(module) if isinstance(module, str) else clone_module(module)


def jit_compile(module: ir.Module | str, entry: str | None, pipeline,
                shared_libs: Sequence[str] = (), opt_level: int = 2) -> CompiledFunction:
    """Compiles `module` (a module, MLIR text or a path; the module is not
    modified) with `pipeline` through its last MLIR stage, JIT-compiles the
    LLVM dialect it produces with `shared_libs` loaded, and returns the
    entry function. Raises CompileError."""
    start = time.perf_counter()
    module = _copied(module)
    name, inputs, results = entry_signature(module, entry)
    # The caller passes every argument: none is bound (see `bind`).
    _mark_bound(find_entry(module, name), ())
    nn_program = clone_module(module) if is_dynamic(find_entry(module, name)) else None
    lowered = pipeline.run(module, until=pipeline.mlir_stages[-1])
    engine, constants = _engine(lowered, shared_libs, opt_level)
    function = CompiledFunction(engine, name, inputs, results, lowered,
                                time.perf_counter() - start, constants)
    return function if nn_program is None else with_shape_function(function, nn_program, name)


def with_shape_function(function: ArrayFunction, module: ir.Module,
                        entry: str | None) -> ArrayFunction:
    """`function` with the shape function of the entry of the nn program
    `module` where that has '?' dims (the caller allocates the results of
    a call at the sizes it computes: see `lamina.shapes`)."""
    if is_dynamic(find_entry(module, entry)):
        copy = clone_module(module)
        function.shape_function = ShapeFunction(copy, find_entry(copy, entry))
    return function


def jit_compile_bound(module: ir.Module | str, entry: str | None, bound: Sequence[int],
                      pipeline, shared_libs: Sequence[str] = (), opt_level: int = 2
                      ) -> tuple[CompiledFunction, CompiledFunction]:
    """Compiles `module` as `jit_compile` does, with the entry's arguments
    at positions `bound` marked `lamina.bound`, and returns its initialiser
    (the bound arguments -> the prepared weights) and the entry (its other
    arguments, then the prepared weights), split by the pipeline's
    `func-split-initializer` passes. Raises CompileError."""
    start = time.perf_counter()
    module = _copied(module)
    name, _, _ = entry_signature(module, entry)
    func = find_entry(module, name)
    _mark_bound(func, bound)
    splits = [stage for stage in pipeline.mlir_stages
              if any(isinstance(p, FuncSplitInitializer) or p == FuncSplitInitializer.argument
                     for p in pipeline.stage(stage).passes)]
    if not splits:
        raise CompileError.at(func.location, "the pipeline has no func-split-initializer pass: "
                                             "it cannot bind weights")
    # The signatures are those after the last split, while still on tensors.
    stages = pipeline.mlir_stages
    pipeline.run(module, until=splits[-1])
    func = find_entry(module, name)
    init_name = ir.FlatSymbolRefAttr(func.attributes[INITIALIZER]).value
    init_inputs, init_results = signature(find_entry(module, init_name))
    inputs, results = signature(func)
    if splits[-1] != stages[-1]:
        pipeline.run(module, start=stages[stages.index(splits[-1]) + 1], until=stages[-1])
    engine, constants = _engine(module, shared_libs, opt_level)
    seconds = time.perf_counter() - start
    return (CompiledFunction(engine, init_name, init_inputs, init_results, module, 0.0,
                             constants),
            CompiledFunction(engine, name, inputs, results, module, seconds, constants))
