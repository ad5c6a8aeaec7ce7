"""The artifact stages' tools: translation of the LLVM dialect to LLVM IR
(in process), and the wheel's `opt` and `llc` (in subprocesses, for a
target triple, CPU and feature list).

Each is a callable from one artifact to the next, as the passes of an
artifact stage are (see lamina.pipeline).
"""

from __future__ import annotations

import os
import subprocess

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
