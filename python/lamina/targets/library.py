"""Deployable shared libraries of a compiled program, with a plain C ABI,
and loading them back from Python.

`lamina-compile model.mlir --target=cpu[:CPU] --emit=shared -o model.so`
compiles the entry function (`--entry`, default `main` or the only public
function) to an object for the target's triple and links it, with a small
C wrapper, into a shared library: with the system `cc` for x86-64, with
`aarch64-linux-gnu-gcc` for AArch64 (lamina.targets.cross).
`--emit=header -o model.h` writes its C header. The library exports three
functions and nothing else (a version script hides the rest):

    int lamina_ENTRY(const T0 *arg0, ..., R0 *result0, ...);
    const char *lamina_ENTRY_signature(void);
    const char *lamina_signature(void);

`lamina_ENTRY` takes one pointer per argument, in the function's order,
then one per result: C-contiguous, row-major buffers of the argument's
shape and element type (header comments and `LAMINA_ENTRY_*` constants
give both), which the caller allocates; results are written, arguments
only read (an argument of memref type, passed in place, may be written).
Element types: f32 `float`, f64 `double`, f16 and bf16 `uint16_t` (their
bits), i1 `uint8_t` (0 or 1), i8..i64 `int8_t`..`int64_t`. Any alignment
works. It returns 0 (`LAMINA_OK`), or `LAMINA_ERROR_NULL_POINTER` (1)
before computing anything when a pointer is NULL. It may be called from
several threads at once: it keeps no state between calls.

`lamina_signature()` describes the library for `lamina.load`: a line
`lamina-library 1`, `arch ARCH`, `target SPEC`, `threads N`, `entry NAME`,
then `input NAME TYPE` / `result NAME TYPE` per value, TYPE as
`f32[8,64]` (`f32[]` for a scalar).

Threads: code for one thread needs no runtime beyond the C library and
libm; code for several threads (the default on the host: all its cores)
calls LLVM's OpenMP runtime, linked by name (`libomp.so`) with the run
paths `$ORIGIN` and the `cmeel-libomp` wheel's directory, so that the
library finds the wheel's runtime on this machine and a copy of it
installed beside the library elsewhere. Cross targets compile for one
thread.
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from mlir import ir

from lamina.diagnostics import CompileError, Diagnostic
from lamina.runtime import ArrayFunction, argument_names, entry_signature, find_entry
from lamina.targets.cpu_model import ARCHITECTURE_NAMES
from lamina.targets.host import host_architecture
from lamina.types import MemRefType, TensorType, numpy_dtype

SIGNATURE_VERSION = 1

# C element types of Lamina's element types.
C_TYPES = {"f32": "float", "f64": "double", "f16": "uint16_t", "bf16": "uint16_t",
           "i1": "uint8_t", "i8": "int8_t", "i16": "int16_t", "i32": "int32_t",
           "i64": "int64_t"}

# ELF e_machine of each architecture.
ELF_MACHINES = {"x86_64": 62, "aarch64": 183}

# The C compiler that links shared libraries for each architecture.
LINKERS = {"x86_64": "cc", "aarch64": "aarch64-linux-gnu-gcc"}

_C_KEYWORDS = {"auto", "break", "case", "char", "const", "continue", "default", "do", "double",
               "else", "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long",
               "register", "restrict", "return", "short", "signed", "sizeof", "static",
               "struct", "switch", "typedef", "union", "unsigned", "void", "volatile", "while",
               "bool", "true", "false"}


@dataclass(frozen=True)
class Value:
    """An argument or result of the entry: its C name and type."""

    name: str
    type: TensorType | MemRefType
    is_input: bool

    @property
    def c_type(self) -> str:
        return C_TYPES[self.type.dtype]

    @property
    def count(self) -> int:
        return int(np.prod(self.type.shape, dtype=np.int64))

    @property
    def writes(self) -> bool:
        return not self.is_input or isinstance(self.type, MemRefType)

    def parameter(self) -> str:
        return f"{'' if self.writes else 'const '}{self.c_type} *{self.name}"


def _c_name(name: str | None, fallback: str, taken: set[str]) -> str:
    """A C identifier for a value named `name` (lamina.parameter), unique."""
    base = re.sub(r"[^A-Za-z0-9_]", "_", name) if name else fallback
    if not base or base[0].isdigit() or base in _C_KEYWORDS:
        base = f"{fallback}_{base}" if name else fallback
    candidate, suffix = base, 1
    while candidate in taken:
        candidate, suffix = f"{base}_{suffix}", suffix + 1
    taken.add(candidate)
    return candidate


def entry_values(module: ir.Module, entry: str | None) -> tuple[str, list[Value]]:
    """The entry's name and its arguments and results as C values. Raises
    CompileError (a private entry, an element type C has no type for, a
    '?' dim)."""
    func = find_entry(module, entry)
    if ir.StringAttr(func.attributes["sym_visibility"]).value == "private" \
            if "sym_visibility" in func.attributes else False:
        raise CompileError.at(func.location, f"@{ir.StringAttr(func.attributes['sym_name']).value}"
                              " is private; only a public function can be a shared library's "
                              "entry")
    name, inputs, results = entry_signature(module, entry)
    taken: set[str] = set()
    names = argument_names(func)
    values = [Value(_c_name(n, f"arg{i}", taken), t, True)
              for i, (n, t) in enumerate(zip(names, inputs))]
    values += [Value(_c_name(None, f"result{i}", taken), t, False) for i, t in enumerate(results)]
    for value in values:
        if isinstance(value.type, TensorType) and not value.type.is_static:
            raise CompileError.at(func.location, f"@{name}: {value.type} has '?' dims; a shared "
                                  "library's C ABI passes buffers of static sizes (dynamic "
                                  "programs run through lamina.compile and lamina-run)")
        if value.type.dtype not in C_TYPES:
            raise CompileError.at(func.location, f"@{name}: {value.type} has no C element type "
                                  f"for a shared library (types: {', '.join(C_TYPES)})")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise CompileError.at(func.location, f"@{name} is not a C identifier: a shared "
                              "library's entry is called lamina_NAME")
    return name, values


def _type_text(value: Value) -> str:
    return f"{value.type.dtype}[{','.join(str(d) for d in value.type.shape)}]"


def signature_text(target, name: str, values: Sequence[Value]) -> str:
    """What `lamina_signature()` returns (see the module docstring)."""
    lines = [f"lamina-library {SIGNATURE_VERSION}", f"arch {target.model.arch}",
             f"target {target.name}", f"threads {target.threads}", f"entry {name}"]
    lines += [f"{'input' if v.is_input else 'result'} {v.name} {_type_text(v)}" for v in values]
    return "\n".join(lines) + "\n"


def _c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def header_source(target, module: ir.Module, entry: str | None = None,
                  source_name: str = "<stdin>") -> str:
    """The C header of the library of `module`'s entry for `target`."""
    name, values = entry_values(module, entry)
    macro = f"LAMINA_{name.upper()}"
    guard = f"{macro}_H"
    width = max(len(v.name) for v in values) if values else 0
    lines = [f"/* The C interface of @{name}, compiled by lamina-compile from "
             f"{os.path.basename(source_name)}",
             f" * for {target.name} ({ARCHITECTURE_NAMES[target.model.arch]}, "
             f"{target.threads} thread{'s' if target.threads > 1 else ''}).",
             " *",
             f" * int lamina_{name}(...) takes one pointer per argument, in order, then one per",
             " * result: C-contiguous row-major buffers the caller allocates (any alignment).",
             " * It returns LAMINA_OK (0), or LAMINA_ERROR_NULL_POINTER when a pointer is NULL",
             " * (nothing is computed then). It keeps no state: threads may call it at once.",
             " * f16 and bf16 elements are passed as their bits (uint16_t), i1 as bytes 0 or 1.",
             " *"]
    type_width = max(len(str(v.type)) for v in values) if values else 0
    c_width = max(len(f"{v.c_type}[{v.count}]") for v in values) if values else 0
    for value in values:
        role = ("input" if not value.writes else "input, written in place") if value.is_input \
            else "result"
        lines.append(f" *   {value.name:<{width}}  {str(value.type):<{type_width}}  "
                     f"{f'{value.c_type}[{value.count}]':<{c_width}}  {role}")
    if target.threads > 1:
        lines += [" *", " * Code for several threads: link with LLVM's OpenMP runtime, libomp.so "
                        "(the library",
                  " * looks for it beside itself, then in the cmeel-libomp wheel it was built "
                  "with)."]
    lines += [" */", f"#ifndef {guard}", f"#define {guard}", "", "#include <stdint.h>", "",
              "#ifdef __cplusplus", 'extern "C" {', "#endif", "",
              "#ifndef LAMINA_OK", "#define LAMINA_OK 0", "#define LAMINA_ERROR_NULL_POINTER 1",
              "#endif", "",
              f"#define {macro}_ARGUMENTS {sum(v.is_input for v in values)}",
              f"#define {macro}_RESULTS {sum(not v.is_input for v in values)}"]
    for value in values:
        prefix = f"{macro}_{value.name.upper()}"
        lines.append(f"/* {value.name}: {value.type} */")
        lines.append(f"#define {prefix}_RANK {len(value.type.shape)}")
        lines.append(f"#define {prefix}_SIZE {value.count}")
        for d, size in enumerate(value.type.shape):
            lines.append(f"#define {prefix}_DIM{d} {size}")
    parameters = (",\n" + " " * len(f"int lamina_{name}(")).join(
        v.parameter() for v in values) or "void"
    lines += ["", f"int lamina_{name}({parameters});", "",
              f"/* The library's description (lamina.load reads it). */",
              f"const char *lamina_{name}_signature(void);",
              "const char *lamina_signature(void);", "",
              "#ifdef __cplusplus", "}", "#endif", "", f"#endif /* {guard} */", ""]
    return "\n".join(lines)


# A strided copy between two memrefs of one shape: lowered code calls it
# (MLIR's runner utilities give it to the JIT).
MEMREF_COPY = """\
typedef struct { int64_t rank; void *descriptor; } lamina_unranked_t;

void memrefCopy(int64_t element_size, lamina_unranked_t *source, lamina_unranked_t *target) {
  int64_t rank = source->rank;
  char **from = source->descriptor, **to = target->descriptor;
  int64_t *from_meta = (int64_t *)(from + 2), *to_meta = (int64_t *)(to + 2);
  int64_t count = 1;
  for (int64_t d = 0; d < rank; ++d) count *= from_meta[1 + d];
  for (int64_t linear = 0; linear < count; ++linear) {
    int64_t rest = linear, from_offset = from_meta[0], to_offset = to_meta[0];
    for (int64_t d = rank - 1; d >= 0; --d) {
      int64_t index = rest % from_meta[1 + d];
      rest /= from_meta[1 + d];
      from_offset += index * from_meta[1 + rank + d];
      to_offset += index * to_meta[1 + rank + d];
    }
    memcpy(to[1] + to_offset * element_size, from[1] + from_offset * element_size,
           element_size);
  }
}
"""


def wrapper_source(target, name: str, values: Sequence[Value]) -> str:
    """The C wrapper: `lamina_NAME` building MLIR's memref descriptors and
    calling `_mlir_ciface_NAME`, and the signature functions."""
    ranks = sorted({len(v.type.shape) for v in values})
    lines = ["#include <stdint.h>", "#include <string.h>", ""]
    for rank in ranks:
        dims = f" int64_t sizes[{rank}]; int64_t strides[{rank}];" if rank else ""
        lines.append(f"typedef struct {{ void *allocated; void *aligned; int64_t offset;{dims} }} "
                     f"lamina_memref{rank}_t;")
    descriptors = ", ".join(f"lamina_memref{len(v.type.shape)}_t *" for v in values) or "void"
    lines += ["", f"void _mlir_ciface_{name}({descriptors});", "", MEMREF_COPY,
              f"static const char signature[] = {_c_string(signature_text(target, name, values))};",
              "", "const char *lamina_signature(void) { return signature; }",
              f"const char *lamina_{name}_signature(void) {{ return signature; }}", "",
              f"int lamina_{name}({', '.join(v.parameter() for v in values) or 'void'}) {{"]
    if values:
        lines.append(f"  if ({' || '.join(f'!{v.name}' for v in values)}) return 1;")
    for index, value in enumerate(values):
        shape = value.type.shape
        variable = f"d{index}"
        lines.append(f"  lamina_memref{len(shape)}_t {variable};")
        lines.append(f"  {variable}.allocated = {variable}.aligned = (void *){value.name};")
        lines.append(f"  {variable}.offset = 0;")
        stride = 1
        strides = []
        for size in reversed(shape):
            strides.append(stride)
            stride *= size
        for d, (size, step) in enumerate(zip(shape, reversed(strides))):
            lines.append(f"  {variable}.sizes[{d}] = {size}; {variable}.strides[{d}] = {step};")
    lines.append(f"  _mlir_ciface_{name}({', '.join(f'&d{i}' for i in range(len(values)))});")
    lines += ["  return 0;", "}", ""]
    return "\n".join(lines)


def _linker(arch: str) -> str:
    """The C compiler that links libraries for `arch`. Raises CompileError."""
    if arch != host_architecture():
        from lamina.targets.cross import cross_tools
        return cross_tools(arch)[1]
    found = shutil.which(LINKERS[arch])
    if found is None:
        raise CompileError([Diagnostic(None, 0, 0, "error",
                                       f"linking a shared library needs a C compiler, "
                                       f"'{LINKERS[arch]}', on PATH")])
    return found


def shared_library(target, module: ir.Module, entry: str | None = None, pipeline=None,
                   **emit_options) -> bytes:
    """The shared library of `module`'s entry (`module` is lowered in
    place) compiled for the CPU `target`: its bytes. Raises CompileError."""
    name, values = entry_values(module, entry)
    compiler = _linker(target.model.arch)
    objects = target.emit(module, "obj", pipeline=pipeline, **emit_options)
    with tempfile.TemporaryDirectory(prefix="lamina-library-") as directory:
        object_path = os.path.join(directory, "program.o")
        with open(object_path, "wb") as f:
            f.write(objects)
        wrapper = os.path.join(directory, "wrapper.c")
        with open(wrapper, "w") as f:
            f.write(wrapper_source(target, name, values))
        script = os.path.join(directory, "exports.map")
        with open(script, "w") as f:
            f.write(f"{{ global: lamina_signature; lamina_{name}; lamina_{name}_signature; "
                    "local: *; };\n")
        output = os.path.join(directory, "library.so")
        command = [compiler, "-shared", "-fPIC", "-O2", "-o", output, wrapper, object_path,
                   f"-Wl,--version-script={script}", "-Wl,-z,defs", "-Wl,-z,noexecstack"]
        if target.threads > 1:
            from lamina.targets.cpu import openmp_library
            runtime = os.path.dirname(openmp_library())
            command += [f"-L{runtime}", "-l:libomp.so", f"-Wl,-rpath,$ORIGIN:{runtime}"]
        command += ["-lm"]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            raise CompileError([Diagnostic(None, 0, 0, "error",
                                           f"{os.path.basename(compiler)} could not link the "
                                           f"shared library: {result.stderr.strip()[-2000:]}")])
        with open(output, "rb") as f:
            return f.read()


# ---------------------------------------------------------------------------
# Loading libraries.


def elf_architecture(path: str) -> str:
    """The architecture (`x86_64`, `aarch64`, or `machine N`) of an ELF
    shared library. Raises ValueError for another kind of file."""
    with open(path, "rb") as f:
        header = f.read(20)
    if len(header) < 20 or header[:4] != b"\x7fELF":
        raise ValueError(f"{path} is not a shared library (no ELF header)")
    order = "little" if header[5] == 1 else "big"
    if int.from_bytes(header[16:18], order) != 3:
        raise ValueError(f"{path} is an ELF file but not a shared library (build it with "
                         "lamina-compile --emit=shared)")
    machine = int.from_bytes(header[18:20], order)
    for arch, number in ELF_MACHINES.items():
        if number == machine:
            return arch
    return f"machine {machine}"


def _parse_type(text: str) -> TensorType:
    match = re.fullmatch(r"(\w+)\[([0-9,]*)\]", text)
    if match is None:
        raise ValueError(f"bad type '{text}'")
    shape = tuple(int(d) for d in match.group(2).split(",") if d)
    return TensorType(shape, match.group(1))


class LibraryFunction(ArrayFunction):
    """The entry of a library from `lamina-compile --emit=shared`, called
    through its C ABI."""

    def __init__(self, path: str, library: ctypes.CDLL, name: str, inputs, results,
                 input_names, target: str, threads: int):
        super().__init__(name, inputs, results)
        self.path = path
        self.target = target
        self.threads = threads
        self.argument_names = tuple(input_names)
        self._library = library
        self._function = getattr(library, f"lamina_{name}")
        self._function.restype = ctypes.c_int
        self._function.argtypes = [ctypes.c_void_p] * (len(inputs) + len(results))

    def __repr__(self) -> str:
        return f"<library {os.path.basename(self.path)}: {super().__repr__()[1:-1]}>"

    def bind(self, weights):
        raise TypeError(f"@{self.name} is loaded from a library ({self.path}), which cannot "
                        "bind weights: compile the program with lamina.compile to bind them")

    def call_with_results(self, arrays: Sequence[np.ndarray], results: Sequence[np.ndarray]):
        status = self._function(*[a.ctypes.data for a in [*arrays, *results]])
        if status != 0:
            raise RuntimeError(f"lamina_{self.name} in {self.path} returned {status}")


def load(path: str) -> LibraryFunction:
    """The entry function of a shared library from `lamina-compile
    --emit=shared`, callable on NumPy arrays (arguments checked for count,
    shape and element type as for `lamina.compile`'s functions; results
    returned). Raises FileNotFoundError, and ValueError for a file that is
    not such a library or one for another architecture."""
    path = os.path.abspath(os.fspath(path))
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such library: {path}")
    arch = elf_architecture(path)
    host = host_architecture()
    if arch != host:
        name = ARCHITECTURE_NAMES.get(arch, arch)
        raise ValueError(f"{path} is a library for {name}, and this machine runs "
                         f"{ARCHITECTURE_NAMES.get(host, host)} code: load it on {name}, or link "
                         f"it into a C program (examples/c) run there or under emulation")
    try:
        library = ctypes.CDLL(path)
    except OSError as error:
        raise ValueError(f"cannot load {path}: {error}") from None
    try:
        describe = library.lamina_signature
    except AttributeError:
        raise ValueError(f"{path} is not a library from lamina-compile --emit=shared (it has "
                         "no lamina_signature)") from None
    describe.restype = ctypes.c_char_p
    describe.argtypes = []
    lines = describe().decode().splitlines()
    if not lines or lines[0] != f"lamina-library {SIGNATURE_VERSION}":
        raise ValueError(f"{path}: unknown library description '{lines[0] if lines else ''}' "
                         f"(this Lamina reads lamina-library {SIGNATURE_VERSION})")
    fields = {}
    inputs, input_names, results = [], [], []
    for line in lines[1:]:
        key, _, rest = line.partition(" ")
        if key in ("input", "result"):
            value_name, _, type_text = rest.partition(" ")
            value_type = _parse_type(type_text)
            numpy_dtype(value_type.dtype)  # an element type this Lamina knows
            (inputs if key == "input" else results).append(value_type)
            if key == "input":
                input_names.append(value_name)
        else:
            fields[key] = rest
    threads = int(fields.get("threads", "1"))
    if threads > 1:
        # OpenMP's workers sleep between calls, as for compiled functions.
        from lamina.targets.cpu import _idle_workers_wait_briefly
        _idle_workers_wait_briefly()
    return LibraryFunction(path, library, fields["entry"], inputs, results, input_names,
                           fields.get("target", "?"), threads)
