# RUN: %PYTHON %s | FileCheck %s
#
# The sm_90a matmul kernels, run thread by thread (Inputs/simt.py): TMA
# loads into 128-byte swizzled tiles and nvgpu.warpgroup.mma as upstream's
# lowering expands it (one wgmma m64nNk16 per 64 rows and k-step of 16,
# its descriptors advanced from the generated ones), the PTX ISA's reading
# of the descriptors, compared with NumPy (1e-2 of the largest output for
# f16, 4e-2 for bf16). A B tile of 128 columns is two boxes side by side
# along N, which one wgmma reads through its descriptor's leading byte
# offset: batched, the boxes are 3-d (1 x 64 x 64), and the offset upstream
# derives from the box's first dim (128 bytes) is not the box stride.

import os
import sys

import numpy as np

import lamina
from lamina.lowering.nn_to_hw import ConvertNNToHW
from lamina.targets import get_target
from lamina.types import numpy_dtype

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import simt  # noqa: E402

TARGET = get_target("cuda:sm_90a")
RNG = np.random.default_rng(11)


def run(f):
    print("\nTEST:", f.__name__)
    f()
    return f


def gpu_stage(text: str, tiles: str):
    """The `gpu` stage of a program, its matmul tiles forced to `tiles`
    (BMxBNxBKxSTAGES)."""
    pipeline = TARGET.pipeline()
    passes = pipeline.stage("hw").passes
    position = next(i for i, p in enumerate(passes) if isinstance(p, ConvertNNToHW))
    passes[position] = ConvertNNToHW(chip="sm_90a", tiles=tiles)
    module = TARGET.emit(lamina.parse(text), "gpu", pipeline=pipeline)
    assert "nvgpu.warpgroup.mma" in str(module) and "nvgpu.tma.async.load" in str(module)
    return module


def shaped(dims, dtype: str) -> str:
    return "x".join(map(str, dims)) + "x" + dtype


def matmul(a_shape, b_shape, dtype: str, tiles: str, epilogue: bool = False):
    """nn.matmul of A and B (batched where they have a leading dim), with
    a bias + relu epilogue where `epilogue`."""
    out_shape = tuple(a_shape[:-1]) + (b_shape[-1],)
    a_t, b_t, o_t = (shaped(s, dtype) for s in (a_shape, b_shape, out_shape))
    bias_t = shaped((b_shape[-1],), dtype)
    arguments = f"%a: tensor<{a_t}>, %b: tensor<{b_t}>" + (
        f", %bias: tensor<{bias_t}>" if epilogue else "")
    body = f"  %0 = \"nn.matmul\"(%a, %b) : (tensor<{a_t}>, tensor<{b_t}>) -> tensor<{o_t}>\n"
    result = "%0"
    if epilogue:
        body += (f"  %1 = \"nn.add\"(%0, %bias) : (tensor<{o_t}>, tensor<{bias_t}>) "
                 f"-> tensor<{o_t}>\n"
                 f"  %2 = \"nn.relu\"(%1) : (tensor<{o_t}>) -> tensor<{o_t}>\n")
        result = "%2"
    text = (f"func.func @main({arguments}) -> tensor<{o_t}> {{\n{body}"
            f"  return {result} : tensor<{o_t}>\n}}\n")
    numpy = numpy_dtype(dtype)
    a = RNG.uniform(-1, 1, a_shape).astype(numpy)
    b = RNG.uniform(-1, 1, b_shape).astype(numpy)
    bias = RNG.uniform(-1, 1, b_shape[-1]).astype(numpy)
    out = np.zeros(out_shape, numpy)
    simt.launch(gpu_stage(text, tiles), [a, b] + ([bias] if epilogue else []) + [out])
    want = a.astype(np.float64) @ b.astype(np.float64)
    if epilogue:
        want = np.maximum(want + bias.astype(np.float64), 0)
    want = want.astype(numpy).astype(np.float64)
    rtol = {"f16": 1e-2, "bf16": 4e-2}[dtype]
    error = np.abs(out.astype(np.float64) - want).max()
    scale = max(np.abs(want).max(), 1.0)
    print(f"{'matches' if error <= rtol * scale else 'DIFFERS'} "
          f"(max abs error {error:.3g}, {out.size} elements)")


# Batched (3-d boxes): 128x128 tiles (two 64-row wgmma chunks, B in two
# boxes along N), 64x128 and 128x64; sizes no tile divides, two K steps
# through two stages; bf16 with a bias + relu epilogue.
# CHECK-LABEL: TEST: batched
# CHECK-NEXT: matches
# CHECK-NEXT: matches
# CHECK-NEXT: matches
# CHECK-NEXT: matches
@run
def batched():
    matmul((2, 130, 128), (2, 128, 200), "f16", "128x128x64x2")
    matmul((2, 64, 64), (2, 64, 128), "f16", "64x128x64x2")
    matmul((2, 128, 64), (2, 64, 64), "f16", "128x64x64x2")
    matmul((2, 70, 128), (2, 128, 136), "bf16", "64x128x64x2", epilogue=True)


# 2-d (2-d boxes, the leading byte offset upstream derives is the box's):
# 128x128 tiles, f16 and bf16 with the epilogue.
# CHECK-LABEL: TEST: two_d
# CHECK-NEXT: matches
# CHECK-NEXT: matches
@run
def two_d():
    matmul((130, 128), (128, 200), "f16", "128x128x64x2")
    matmul((70, 64), (64, 136), "bf16", "64x128x64x2", epilogue=True)
