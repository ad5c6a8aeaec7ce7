"""Programs for another architecture than this machine's, run under
emulation: the CPU pipeline's object file for the target's triple, linked
with a small C driver by the cross compiler (`aarch64-linux-gnu-gcc`,
statically, so that no AArch64 C library need be installed where it runs)
into an executable, which runs under `qemu-aarch64` on arrays passed
through files.

The driver reads each argument from `argN.bin` (raw C-ordered elements)
into a buffer aligned like Lamina's own, builds the memref descriptors of
the C ABI (lamina.targets.cpu), calls `_mlir_ciface_ENTRY`, writes each
result to `resN.bin` and each argument passed in place back to its file.
It defines `memrefCopy` (what MLIR's runner utilities would give a JIT on
this machine: lowered code copies strided buffers with it), as its own
strided copy.

Code for more than one thread would call LLVM's OpenMP runtime, which
Debian has no cross build of (its `libgomp1-arm64-cross` is GCC's, without
the `__kmpc` entry points), so cross targets compile for one thread
(lamina.targets.cpu). SVE code runs on QEMU's `max` CPU with the vector
length it was compiled for, or 256 bits for vector-length agnostic code;
NEON code on `max` with SVE off, so that an SVE instruction in it would
fault instead of passing unnoticed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from typing import Sequence

import numpy as np

from mlir import ir

from lamina.diagnostics import CompileError, Diagnostic
from lamina.runtime import ArrayFunction, entry_signature
from lamina.targets.cpu_model import CPUTargetModel
from lamina.types import MemRefType, numpy_dtype

# What runs and links code for each architecture, and the Debian packages
# that install them.
CROSS_TOOLS = {"aarch64": ("qemu-aarch64", "aarch64-linux-gnu-gcc")}
CROSS_PACKAGES = {"aarch64": "qemu-user gcc-aarch64-linux-gnu libc6-arm64-cross "
                             "libc6-dev-arm64-cross"}

# The alignment of the driver's buffers (lamina.runtime.WEIGHT_ALIGNMENT).
ALIGNMENT = 64

# The vector length QEMU gives vector-length agnostic SVE code.
AGNOSTIC_SVE_BITS = 256


def cross_tools(arch: str) -> tuple[str, str]:
    """The emulator and the C cross compiler for `arch`, found on PATH.
    Raises CompileError naming the packages to install."""
    if arch not in CROSS_TOOLS:
        raise CompileError([Diagnostic(None, 0, 0, "error", f"no emulator is known for {arch} "
                                                            "code on this machine")])
    found = [shutil.which(tool) for tool in CROSS_TOOLS[arch]]
    missing = [tool for tool, path in zip(CROSS_TOOLS[arch], found) if path is None]
    if missing:
        raise CompileError([Diagnostic(
            None, 0, 0, "error",
            f"running {arch} code on this machine needs {' and '.join(missing)} on PATH "
            f"(Debian: apt-get install {CROSS_PACKAGES[arch]})")])
    libc = subprocess.run([found[1], "-print-file-name=libc.a"], capture_output=True,
                          text=True).stdout.strip()
    if not os.path.isabs(libc):
        raise CompileError([Diagnostic(
            None, 0, 0, "error",
            f"{CROSS_TOOLS[arch][1]} has no C library to link {arch} programs with (Debian: "
            f"apt-get install {CROSS_PACKAGES[arch]})")])
    return found[0], found[1]


def emulator_command(model: CPUTargetModel) -> list[str]:
    """The QEMU command line that runs code for `model`."""
    emulator, _ = cross_tools(model.arch)
    if model.has("sve") or model.has("sve2"):
        bits = model.sve_bits or AGNOSTIC_SVE_BITS
        return [emulator, "-cpu", f"max,sve-default-vector-length={bits // 8}"]
    return [emulator, "-cpu", "max,sve=off"]


def _descriptor_type(rank: int) -> str:
    return f"memref{rank}_t"


def driver_source(name: str, inputs: Sequence, results: Sequence) -> str:
    """The C driver of the entry `name` with these argument and result types."""
    ranks = sorted({len(t.shape) for t in [*inputs, *results]})
    lines = ["#include <stdint.h>", "#include <stdio.h>", "#include <stdlib.h>",
             "#include <string.h>", ""]
    for rank in ranks:
        dims = f" int64_t sizes[{rank}]; int64_t strides[{rank}];" if rank else ""
        lines.append(f"typedef struct {{ void *allocated; void *aligned; int64_t offset;{dims} }} "
                     f"{_descriptor_type(rank)};")
    values = [*inputs, *results]
    parameters = ", ".join(f"{_descriptor_type(len(t.shape))} *" for t in values) or "void"
    lines += [
        f"void _mlir_ciface_{name}({parameters});",
        "",
        "typedef struct { int64_t rank; void *descriptor; } unranked_t;",
        "",
        "/* A strided copy between two memrefs of the same shape. */",
        "void memrefCopy(int64_t element_size, unranked_t *source, unranked_t *target) {",
        "  int64_t rank = source->rank;",
        "  char **from = source->descriptor, **to = target->descriptor;",
        "  int64_t *from_meta = (int64_t *)(from + 2), *to_meta = (int64_t *)(to + 2);",
        "  int64_t count = 1;",
        "  for (int64_t d = 0; d < rank; ++d) count *= from_meta[1 + d];",
        "  for (int64_t linear = 0; linear < count; ++linear) {",
        "    int64_t rest = linear, from_offset = from_meta[0], to_offset = to_meta[0];",
        "    for (int64_t d = rank - 1; d >= 0; --d) {",
        "      int64_t index = rest % from_meta[1 + d];",
        "      rest /= from_meta[1 + d];",
        "      from_offset += index * from_meta[1 + rank + d];",
        "      to_offset += index * to_meta[1 + rank + d];",
        "    }",
        "    memcpy(to[1] + to_offset * element_size, from[1] + from_offset * element_size,",
        "           element_size);",
        "  }",
        "}",
        "",
        "static void *buffer(const char *directory, const char *file, size_t bytes, int read) {",
        f"  void *data = aligned_alloc({ALIGNMENT}, (bytes + {ALIGNMENT - 1}) / {ALIGNMENT} * "
        f"{ALIGNMENT} + {ALIGNMENT});",
        "  char path[4096];",
        "  snprintf(path, sizeof path, \"%s/%s\", directory, file);",
        "  if (!data) { fprintf(stderr, \"cannot allocate %zu bytes\\n\", bytes); exit(2); }",
        "  if (read) {",
        "    FILE *f = fopen(path, \"rb\");",
        "    if (!f || fread(data, 1, bytes, f) != bytes) {",
        "      fprintf(stderr, \"cannot read %s\\n\", path); exit(2);",
        "    }",
        "    fclose(f);",
        "  }",
        "  return data;",
        "}",
        "",
        "static void save(const char *directory, const char *file, const void *data, "
        "size_t bytes) {",
        "  char path[4096];",
        "  snprintf(path, sizeof path, \"%s/%s\", directory, file);",
        "  FILE *f = fopen(path, \"wb\");",
        "  if (!f || fwrite(data, 1, bytes, f) != bytes) {",
        "    fprintf(stderr, \"cannot write %s\\n\", path); exit(2);",
        "  }",
        "  fclose(f);",
        "}",
        "",
        "int main(int argc, char **argv) {",
        "  if (argc != 2) { fprintf(stderr, \"usage: %s DIRECTORY\\n\", argv[0]); return 2; }",
    ]
    calls = []
    for index, value in enumerate(values):
        is_input = index < len(inputs)
        file = f"arg{index}.bin" if is_input else f"res{index - len(inputs)}.bin"
        rank = len(value.shape)
        count = int(np.prod(value.shape, dtype=np.int64))
        bytes_ = count * _itemsize(value)
        variable = f"v{index}"
        lines.append(f"  {_descriptor_type(rank)} {variable};")
        lines.append(f"  {variable}.allocated = {variable}.aligned = buffer(argv[1], \"{file}\", "
                     f"{bytes_}, {1 if is_input else 0});")
        lines.append(f"  {variable}.offset = 0;")
        stride = 1
        strides = []
        for size in reversed(value.shape):
            strides.append(stride)
            stride *= size
        for d, (size, step) in enumerate(zip(value.shape, reversed(strides))):
            lines.append(f"  {variable}.sizes[{d}] = {size}; {variable}.strides[{d}] = {step};")
        calls.append(f"&{variable}")
    lines.append(f"  _mlir_ciface_{name}({', '.join(calls)});")
    for index, value in enumerate(values):
        count = int(np.prod(value.shape, dtype=np.int64))
        if index >= len(inputs):
            lines.append(f"  save(argv[1], \"res{index - len(inputs)}.bin\", v{index}.aligned, "
                         f"{count * _itemsize(value)});")
        elif isinstance(value, MemRefType):
            lines.append(f"  save(argv[1], \"arg{index}.bin\", v{index}.aligned, "
                         f"{count * _itemsize(value)});")
    lines += ["  return 0;", "}", ""]
    return "\n".join(lines)


def _itemsize(value) -> int:
    return numpy_dtype(value.dtype).itemsize


def link_executable(model: CPUTargetModel, objects: Sequence[str], driver: str,
                    output: str) -> None:
    """Links object files and the C driver's source into a static
    executable for `model`'s architecture. Raises CompileError."""
    _, compiler = cross_tools(model.arch)
    command = [compiler, "-O2", "-static", "-o", output, driver, *objects, "-lm"]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise CompileError([Diagnostic(None, 0, 0, "error",
                                       f"{os.path.basename(compiler)} could not link the "
                                       f"program: {result.stderr.strip()[-2000:]}")])


class EmulatedFunction(ArrayFunction):
    """An entry function compiled for another architecture, run under
    emulation (`command`: QEMU and its options) in a process per call."""

    def __init__(self, executable: str, command: Sequence[str], name: str, inputs, results,
                 module: ir.Module | None, compile_seconds: float, directory: str):
        super().__init__(name, inputs, results, module, compile_seconds)
        self.executable = executable
        self.command = list(command)
        self._directory = directory

    def describe(self) -> str:
        """How it runs: the emulator and its CPU."""
        return " ".join(os.path.basename(c) if i == 0 else c
                        for i, c in enumerate(self.command))

    def bind(self, weights):
        raise TypeError(f"@{self.name} runs under emulation ({self.describe()}), which cannot "
                        "bind weights")

    def call_with_results(self, arrays: Sequence[np.ndarray], results: Sequence[np.ndarray]):
        with tempfile.TemporaryDirectory(prefix="lamina-emulated-") as directory:
            for index, array in enumerate(arrays):
                np.ascontiguousarray(array).tofile(os.path.join(directory, f"arg{index}.bin"))
            run = subprocess.run([*self.command, self.executable, directory],
                                 capture_output=True, text=True)
            if run.returncode != 0:
                how = (f"exited with code {run.returncode}" if run.returncode > 0
                       else f"was killed by signal {-run.returncode}")
                raise RuntimeError(f"@{self.name} under {self.describe()} {how}: "
                                   f"{run.stderr.strip()[-2000:]}")
            for index, result in enumerate(results):
                path = os.path.join(directory, f"res{index}.bin")
                result[...] = np.fromfile(path, dtype=result.dtype).reshape(result.shape)
            for index, (array, spec) in enumerate(zip(arrays, self.inputs)):
                if isinstance(spec, MemRefType):
                    path = os.path.join(directory, f"arg{index}.bin")
                    array[...] = np.fromfile(path, dtype=array.dtype).reshape(array.shape)

    def __del__(self):
        shutil.rmtree(getattr(self, "_directory", ""), ignore_errors=True)


def compile_emulated(model: CPUTargetModel, module: ir.Module, entry: str | None,
                     pipeline) -> EmulatedFunction:
    """Compiles the entry of `module` (not modified) with `pipeline` to an
    object file for `model`, links it into an executable and returns the
    function that runs it under emulation. Raises CompileError."""
    start = time.perf_counter()
    command = emulator_command(model)
    with module.context:
        module = ir.Module.parse(module.operation.get_asm(enable_debug_info=True,
                                                          print_generic_op_form=True))
    name, inputs, results = entry_signature(module, entry)
    objects = pipeline.run(module, until="obj")
    directory = tempfile.mkdtemp(prefix="lamina-cross-")
    try:
        object_path = os.path.join(directory, "program.o")
        with open(object_path, "wb") as f:
            f.write(objects)
        driver = os.path.join(directory, "driver.c")
        with open(driver, "w") as f:
            f.write(driver_source(name, inputs, results))
        executable = os.path.join(directory, "program")
        link_executable(model, [object_path], driver, executable)
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    return EmulatedFunction(executable, command, name, inputs, results, module,
                            time.perf_counter() - start, directory)
