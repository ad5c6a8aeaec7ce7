"""--cpu-protect-inputs: the tensor arguments of public functions are read-only.

Adds `bufferization.writable = false` to the argument attributes of every
tensor argument of each public `func.func` with a body, keeping the other
argument attributes. One-shot bufferization across function boundaries then
copies such an argument before writing into it, so compiled code never
writes the caller's input buffers (a NumPy array passed to a compiled
function is left as it was).

Expects functions on tensors, before bufferization; private functions and
declarations are not touched (bufferization may write their arguments in
place). Guarantees: the IR computes the same values; only argument
attributes change, and every tensor argument of a public function ends up
with `bufferization.writable = false`.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from lamina.pass_registry import Pass, register_pass
from lamina.passes.cpu_request_c_interface import public_functions


@register_pass
@dataclass
class CPUProtectInputs(Pass):
    """Marks the tensor arguments of public functions read-only for bufferization, so that compiled code never writes the caller's inputs."""

    argument = "cpu-protect-inputs"
    verifies_lamina_ops = False  # no op of Lamina's dialects at its stage

    def run(self, op: ir.Operation) -> None:
        for func in public_functions(op):
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
