# RUN: %PYTHON %s | FileCheck %s
#
# f32 matmuls and transposed operands as the sm_80 kernels compute them,
# thread by thread (the SIMT interpreter of Inputs/simt.py runs the `gpu`
# stage: fragments loaded, split and multiplied by mma.sync as the PTX ISA
# defines them), against NumPy: 3xTF32 against the f64 product of the f32
# operands, one tf32 product (precision = "tf32") against the product of
# the operands rounded to tf32, and operands stored transposed read in
# place by ldmatrix (transposed for A, not for B) and by element loads
# (tf32).

import os
import sys

import numpy as np

import lamina
from lamina.dialects import nn
from lamina.lowering.nn_to_hw import ConvertNNToHW
from lamina.targets import get_target
from lamina.types import numpy_dtype

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import simt  # noqa: E402

TARGET = get_target("cuda:sm_80")
RNG = np.random.default_rng(11)


def run(f):
    print("\nTEST:", f.__name__)
    f()
    return f


def gpu_stage(text: str, tiles: str = ""):
    """The `gpu` stage of a program, its matmul tiles forced to `tiles`
    (BMxBNxBKxSTAGES) where given."""
    pipeline = TARGET.pipeline()
    if tiles:
        passes = pipeline.stage("hw").passes
        position = next(i for i, p in enumerate(passes) if isinstance(p, ConvertNNToHW))
        passes[position] = ConvertNNToHW(chip="sm_80", tiles=tiles)
    return TARGET.emit(lamina.parse(text), "gpu", pipeline=pipeline)


def compare(got, want, rtol):
    """Whether `got` is within `rtol` of `want`, relative to want's largest
    magnitude (at least 1), with the relative error printed."""
    got, want = got.astype(np.float64), want.astype(np.float64)
    scale = max(np.abs(want).max(), 1.0)
    error = np.abs(got - want).max() / scale
    print(f"{'matches' if error <= rtol else 'DIFFERS'} at {rtol:g} "
          f"(error {'< 1e-6' if error < 1e-6 else 'over 1e-6'}, {got.size} elements)")


def uniform(shape, dtype="f32"):
    return RNG.uniform(-1, 1, shape).astype(numpy_dtype(dtype))


def f64(x):
    return x.astype(np.float64)


def tf32(x):
    return f64(nn.round_tf32(x))


def matmul(a_shape, b_shape, t, transpose_a=False, transpose_b=False, attributes=""):
    """A program: `a` (stored transposed where `transpose_a`) times `b`."""
    def operand(name, shape, transposed):
        stored = shape[:-2] + (shape[-1], shape[-2]) if transposed else shape
        value = f"%{name}"
        line = ""
        if transposed:
            perm = ", ".join(map(str, tuple(range(len(shape) - 2)) + (len(shape) - 1,
                                                                    len(shape) - 2)))
            line = (f'  %{name}t = "nn.transpose"(%{name}) {{perm = array<i64: {perm}>}} : '
                    f"({tensor(stored, t)}) -> {tensor(shape, t)}\n")
            value = f"%{name}t"
        return stored, value, line

    a_stored, a, a_line = operand("a", a_shape, transpose_a)
    b_stored, b, b_line = operand("b", b_shape, transpose_b)
    out = a_shape[:-1] + b_shape[-1:]
    return (f"func.func @main(%a: {tensor(a_stored, t)}, %b: {tensor(b_stored, t)}) -> "
            f"{tensor(out, t)} {{\n{a_line}{b_line}"
            f'  %0 = "nn.matmul"({a}, {b}) {attributes}: ({tensor(a_shape, t)}, '
            f"{tensor(b_shape, t)}) -> {tensor(out, t)}\n"
            f"  return %0 : {tensor(out, t)}\n}}\n"), a_stored, b_stored, out


def tensor(shape, t):
    return f"tensor<{'x'.join(map(str, shape))}x{t}>"


def launch(program, a_stored, b_stored, out, t, tiles=""):
    a, b = uniform(a_stored, t), uniform(b_stored, t)
    result = np.zeros(out, numpy_dtype(t))
    simt.launch(gpu_stage(program, tiles), [a, b, result])
    return a, b, result


def swap(x, transposed):
    return np.swapaxes(x, -1, -2) if transposed else x


PROGRAM = """
func.func @main(%a: tensor<70x45xf32>, %b: tensor<45x50xf32>, %bias: tensor<50xf32>) -> tensor<70x50xf32> {
  %0 = "nn.matmul"(%a, %b) : (tensor<70x45xf32>, tensor<45x50xf32>) -> tensor<70x50xf32>
  %1 = "nn.add"(%0, %bias) : (tensor<70x50xf32>, tensor<50xf32>) -> tensor<70x50xf32>
  %2 = "nn.relu"(%1) : (tensor<70x50xf32>) -> tensor<70x50xf32>
  return %2 : tensor<70x50xf32>
}
"""


# 3xTF32 on sizes that no tile divides, with a bias and relu: within 1e-6
# of the f64 product (a single tf32 product is off by about 1e-3).
# CHECK-LABEL: TEST: three_tf32
# CHECK-NEXT: matches at 1e-06 (error < 1e-6, 3500 elements)
@run
def three_tf32():
    a, b, bias = uniform((70, 45)), uniform((45, 50)), uniform((50,))
    out = np.zeros((70, 50), np.float32)
    simt.launch(gpu_stage(PROGRAM), [a, b, bias, out])
    compare(out, np.maximum(f64(a) @ f64(b) + f64(bias), 0), 1e-6)


# precision = "tf32": one product of the operands rounded to tf32, which
# the f64 product of the rounded operands matches and that of the f32
# operands does not.
# CHECK-LABEL: TEST: one_tf32
# CHECK-NEXT: matches at 1e-06
# CHECK-NEXT: DIFFERS at 1e-05
@run
def one_tf32():
    program, *shapes = matmul((40, 72), (72, 24), "f32", attributes='{precision = "tf32"} ')
    a, b, out = launch(program, *shapes, "f32")
    compare(out, tf32(a) @ tf32(b), 1e-6)
    compare(out, f64(a) @ f64(b), 1e-5)


# Transposed operands read in place: f32 (element loads at swapped
# indices, 3xTF32), batched; f16 with B transposed (ldmatrix x4, and x2
# for the last of an odd number of 8-column fragments at 64x48 tiles),
# bf16 with A transposed (ldmatrix transposed), f16 with both.
# CHECK-LABEL: TEST: transposed
# CHECK-NEXT: f32 A^T B^T: matches at 1e-06
# CHECK-NEXT: f32 batched B^T: matches at 1e-06
# CHECK-NEXT: f16 B^T: matches at 0.001
# CHECK-NEXT: f16 B^T 64x48 tiles: matches at 0.001
# CHECK-NEXT: bf16 A^T: matches at 0.01
# CHECK-NEXT: f16 A^T B^T: matches at 0.001
@run
def transposed():
    cases = [("f32 A^T B^T", (40, 36), (36, 56), "f32", True, True, "", 1e-6),
             ("f32 batched B^T", (2, 30, 20), (2, 20, 25), "f32", False, True, "", 1e-6),
             ("f16 B^T", (65, 48), (48, 72), "f16", False, True, "", 1e-3),
             ("f16 B^T 64x48 tiles", (65, 48), (48, 72), "f16", False, True, "64x48x32x2",
              1e-3),
             ("bf16 A^T", (65, 48), (48, 40), "bf16", True, False, "", 1e-2),
             ("f16 A^T B^T", (80, 32), (32, 56), "f16", True, True, "", 1e-3)]
    for name, a_shape, b_shape, t, ta, tb, tiles, rtol in cases:
        program, *shapes = matmul(a_shape, b_shape, t, ta, tb)
        a, b, out = launch(program, *shapes, t, tiles)
        print(f"{name}: ", end="")
        compare(out, f64(swap(a, ta)) @ f64(swap(b, tb)), rtol)
