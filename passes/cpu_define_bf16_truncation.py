"""--cpu-define-bf16-truncation: the module defines `__truncsfbf2`, the
f32 -> bf16 conversion that LLVM calls where the CPU has no instruction
for it.

On an x86 CPU without AVX512-BF16 (or AVX-NE-CONVERT), LLVM's code
generator keeps a bf16 value that crosses a basic block (a phi: an
`scf.if` or a loop yielding a bf16 element, as the emulated GPU kernels'
guarded loads do) in an f32 register and converts it back by calling
the compiler runtime's `__truncsfbf2`. Object files get it from libgcc
or compiler-rt when linked; the JIT has neither, and the program failed
to load ("Symbols not found: [ __truncsfbf2 ]"). This pass defines the
function in the module, with weak linkage (a runtime library's
definition, where one is linked, is as good): round to nearest, ties to
even, NaNs kept quiet NaNs, as the runtime's does and as `arith.truncf`
rounds. The CPU target adds it for CPUs without a bf16 conversion
instruction.

Expects the LLVM dialect (after `convert-to-llvm`). Guarantees: the
module gains one `llvm.func`, unless it already defines one of that name
(a declaration of it becomes the definition).
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from lamina.pass_registry import Pass, register_pass

NAME = "__truncsfbf2"

# f32 bits b: a NaN becomes the quiet NaN of its top half; others round
# to nearest even: (b + 0x7fff + ((b >> 16) & 1)) >> 16.
_DEFINITION = f"""
llvm.func weak @{NAME}(%x: f32) -> bf16 {{
  %bits = llvm.bitcast %x : f32 to i32
  %c1 = llvm.mlir.constant(1 : i32) : i32
  %c16 = llvm.mlir.constant(16 : i32) : i32
  %bias = llvm.mlir.constant(32767 : i32) : i32
  %magnitude_mask = llvm.mlir.constant(2147483647 : i32) : i32
  %infinity = llvm.mlir.constant(2139095040 : i32) : i32
  %quiet = llvm.mlir.constant(64 : i32) : i32
  %top = llvm.lshr %bits, %c16 : i32
  %odd = llvm.and %top, %c1 : i32
  %up = llvm.add %bits, %bias : i32
  %rounded_bits = llvm.add %up, %odd : i32
  %rounded = llvm.lshr %rounded_bits, %c16 : i32
  %nan_bits = llvm.or %top, %quiet : i32
  %magnitude = llvm.and %bits, %magnitude_mask : i32
  %is_nan = llvm.icmp "ugt" %magnitude, %infinity : i32
  %chosen = llvm.select %is_nan, %nan_bits, %rounded : i1, i32
  %half = llvm.trunc %chosen : i32 to i16
  %result = llvm.bitcast %half : i16 to bf16
  llvm.return %result : bf16
}}
"""


@register_pass
@dataclass
class CPUDefineBF16Truncation(Pass):
    """Defines `__truncsfbf2` (f32 -> bf16, to nearest even) in the module, weak, for the JIT on CPUs without a bf16 conversion instruction, whose generated code calls it."""

    argument = "cpu-define-bf16-truncation"
    verifies_lamina_ops = False  # no op of Lamina's dialects at its stage

    def run(self, op: ir.Operation) -> None:
        block = op.regions[0].blocks[0]
        for child in list(block.operations):
            child = child.operation
            if "sym_name" in child.attributes and \
                    ir.StringAttr(child.attributes["sym_name"]).value == NAME:
                if child.regions[0].blocks:
                    return  # defined already
                child.erase()  # a declaration (a call of it written out): defined here
        with op.context, ir.Location.unknown():
            definition = ir.Module.parse(_DEFINITION)
            with ir.InsertionPoint(block):
                definition.body.operations[0].operation.clone()
