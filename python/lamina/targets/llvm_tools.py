"""The artifact stages' tools: translation of the LLVM dialect to LLVM IR
(in process), and the wheel's `opt` and `llc` (in subprocesses, for a
target triple, CPU and feature list).

Each is a callable from one artifact to the next, as the passes of an
artifact stage are (see lamina.pipeline). `machine_names(arch)` is what
the pinned LLVM's backend for an architecture knows: its CPU and feature
names, which target specs are checked against.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import subprocess
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import llvm

from lamina.diagnostics import CompileError, Diagnostic, from_mlir
from lamina.passes.cpu_check_lowered_to_llvm import check_llvm_dialect
from lamina.toolchain import tool_path


class TranslateToLLVMIR:
    """Translates an LLVM-dialect module to LLVM IR text."""

    argument = "mlir-to-llvmir"

    def __init__(self, triple: str):
        self.triple = triple

    def __call__(self, module: ir.Module) -> str:
        check_llvm_dialect(module)
        with module.context:
            module.operation.attributes["llvm.target_triple"] = ir.StringAttr.get(self.triple)
            try:
                return llvm.translate_module_to_llvmir(module.operation)
            except ir.MLIRError as error:
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

    def __init__(self, triple: str, cpu: str, features: tuple[str, ...], opt_level: int = 3,
                 options: tuple[str, ...] = ()):
        self.triple, self.cpu, self.features, self.opt_level = triple, cpu, features, opt_level
        self.options = tuple(options)

    def machine_flags(self) -> list[str]:
        flags = [f"-mtriple={self.triple}", f"-mcpu={self.cpu}"]
        if self.features:
            flags.append(f"-mattr={','.join(self.features)}")
        return flags + list(self.options)


class Opt(_MachineTool):
    """Optimizes LLVM IR text with the wheel's `opt` at the target's
    level (what the JIT does in-process), for the target machine."""

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
                 opt_level: int = 3, options: tuple[str, ...] = ()):
        super().__init__(triple, cpu, features, opt_level, options)
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


@dataclass(frozen=True)
class MachineNames:
    """The CPU and feature names (without `+`/`-`) an LLVM backend knows."""

    cpus: tuple[str, ...]
    features: tuple[str, ...]


# `  name   - Description.` under `Available CPUs` / `Available features`.
_HELP_ENTRY = re.compile(r"^  (\S+)\s+- ")


@functools.lru_cache(maxsize=None)
def machine_names(arch: str) -> MachineNames:
    """The CPUs and features of the pinned LLVM's backend for `arch`
    (`x86_64`, `aarch64`), as `llc -mtriple=ARCH -mcpu=help` lists them;
    kept in Lamina's cache directory (keyed by the `llc` binary), since
    asking takes about half a second."""
    from lamina.cache import cache_dir, write_atomically
    llc = tool_path("llc")
    status = os.stat(llc)
    key = hashlib.sha256(f"{llc} {status.st_size} {status.st_mtime_ns} {arch}".encode())
    directory = cache_dir()
    path = (os.path.join(directory, "llvm", f"names-{key.hexdigest()[:24]}.json")
            if directory else None)
    if path is not None:
        try:
            with open(path) as f:
                saved = json.load(f)
            return MachineNames(tuple(saved["cpus"]), tuple(saved["features"]))
        except (OSError, ValueError, KeyError, TypeError):
            pass
    result = subprocess.run([llc, f"-mtriple={arch}", "-mcpu=help"], input=b"",
                            capture_output=True)
    sections: dict[str, list[str]] = {"cpus": [], "features": []}
    section = None
    for line in (result.stdout + result.stderr).decode(errors="replace").splitlines():
        if line.startswith("Available CPUs"):
            section = "cpus"
        elif line.startswith("Available features"):
            section = "features"
        elif section is not None:
            match = _HELP_ENTRY.match(line)
            if match:
                sections[section].append(match[1])
    names = MachineNames(tuple(sections["cpus"]), tuple(sections["features"]))
    if path is not None and names.cpus:
        try:
            write_atomically(path, json.dumps({"cpus": names.cpus,
                                               "features": names.features}).encode())
        except OSError:
            pass
    return names
