"""Every nn op reaches the GPU: each op class of the nn dialect has a
lowering to hw kernels (in the registry `TO_HW`, its own or a base
class's) or a decomposition the cuda pipeline applies, and its docstring's
example, in f32, f16 and bf16, compiles through the cuda pipeline's `hw`
stage (convert-nn-to-hw, hw-check, hw-check-hazards) with no op left.

Every op does, except the ops listed in NO_GPU_KERNEL_YET, which are held
to convert-nn-to-hw's located error instead: no other op class goes without
a lowering or a decomposition, and no other example is allowed to fail.
"""

from __future__ import annotations

import re

import pytest
from mlir import ir

from lamina.diagnostics import CompileError
from lamina.dialects import nn
from lamina.lowering.nn_to_hw import TO_HW
from lamina.parsing import parse
from lamina.targets.cuda import CUDATarget

# Containers, not computations: a fusion group's body is lowered op by op.
CONTAINERS = {"fused"}

# Ops the hw kernels cannot take yet, each with why: they stop at
# convert-nn-to-hw with its error at the op, which the last test checks.
NO_GPU_KERNEL_YET = {
    # The hw register tiles and epilogues read and write no i8 or ui8 yet.
    "quantize": "i8/ui8 tensors",
    "dequantize": "i8/ui8 tensors",
}

ALL_OPS = sorted((name, op_class) for name, op_class in nn.NN.ops.items()
                 if op_class.__module__ == nn.__name__ and name not in CONTAINERS)
OPS = [(name, op_class) for name, op_class in ALL_OPS if name not in NO_GPU_KERNEL_YET]
HELD = [(name, op_class) for name, op_class in ALL_OPS if name in NO_GPU_KERNEL_YET]


def decomposed_by_cuda_pipeline(op_class: type) -> bool:
    """What nn-decompose rebuilds from primitive ops in the cuda pipeline
    (composites with a decomposition; attention stays whole)."""
    return (issubclass(op_class, nn.CompositeOp) and not issubclass(op_class, nn.AttentionOp)
            and op_class.decompose is not nn.CompositeOp.decompose)


def example(op_class: type) -> str:
    """The op's docstring example: `%r = "nn.op"(%a, ...) {...} : (...) -> T`."""
    lines = [line.strip() for line in (op_class.__doc__ or "").splitlines()]
    found = [line[len("Example:"):].strip() for line in lines if line.startswith("Example:")]
    assert found, f"{op_class.__name__} has no Example: in its docstring"
    return found[0]


def program(op_class: type, dtype: str) -> str:
    """A function applying the op of its example to arguments, its float
    tensors of `dtype`."""
    text = re.sub(r"(tensor<(?:[0-9x]*x)?)f32>", rf"\g<1>{dtype}>", example(op_class))
    match = re.match(r"%\w+ = (\"nn\.\w+\")\(([^)]*)\)(.*): \(([^)]*)\) -> (.+)$", text)
    assert match, text
    name, operands, attributes, operand_types, result_type = match.groups()
    types = [t.strip() for t in re.findall(r"tensor<[^>]*>", operand_types)]
    arguments = ", ".join(f"%a{i}: {t}" for i, t in enumerate(types))
    uses = ", ".join(f"%a{i}" for i in range(len(types)))
    return (f"func.func @main({arguments}) -> {result_type} {{\n"
            f"  %r = {name}({uses}){attributes}: ({operand_types}) -> {result_type}\n"
            f"  return %r : {result_type}\n}}\n")


def compiles_to_hw(text: str) -> None:
    module = parse(text)
    CUDATarget("sm_80").pipeline().run(module, until="hw")
    left = []

    def visit(op):
        if op.name.startswith("nn."):
            left.append(op.name)
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    assert not left, f"left after the hw stage: {left}"


@pytest.mark.parametrize("name,op_class", OPS, ids=[name for name, _ in OPS])
def test_every_op_has_a_gpu_lowering(name, op_class):
    lowered = op_class in TO_HW or decomposed_by_cuda_pipeline(op_class)
    assert lowered, (
        f"nn.{name} has no lowering to hw kernels (register one with "
        f"@lowering(nn.{op_class.__name__}, to='hw')) and no decomposition")


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("name,op_class", OPS, ids=[name for name, _ in OPS])
def test_every_op_example_compiles_for_the_gpu(name, op_class, dtype):
    compiles_to_hw(program(op_class, dtype))


@pytest.mark.parametrize("name,op_class", HELD, ids=[name for name, _ in HELD])
def test_ops_without_a_gpu_kernel_fail_at_the_op(name, op_class):
    assert op_class not in TO_HW and not decomposed_by_cuda_pipeline(op_class)
    with pytest.raises(CompileError) as failure:
        compiles_to_hw(program(op_class, "f32"))
    assert f"<string>:2:8: error: 'nn.{name}' is not lowered to hw kernels" in str(failure.value)
